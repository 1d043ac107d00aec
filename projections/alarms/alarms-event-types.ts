/** The event types the alarms projection reads: liveness and drift facts, topology, GPU errors, operator actions, held steps, set-aside events, integrity, certificate and replication backlog alarms. */
import { driftEventTypes } from '../drift/drift-facts.js';
import { livenessEventTypes } from '../liveness/liveness-facts.js';
import { certificateAlarmEventTypes } from './certificate-alarms.js';

export const alarmsEventTypes = [
  ...livenessEventTypes,
  ...driftEventTypes,
  'TopologyDeclared',
  'GpuXidObserved',
  'GpuTelemetryObserved',
  'AlarmAcknowledged',
  'StepHeld',
  'StepOperatorAction',
  'ProjectionEventSetAside',
  'LedgerIntegrityAlarmRaised',
  // A site's replication backlog (src/federation): warned by the site, cleared by a heartbeat that shows it drained.
  // Both types are newer than every log that could hold them, so the projection's version did not change for them.
  'SiteReplicationBacklogWarned',
  'SiteHeartbeat',
  ...certificateAlarmEventTypes,
] as const;
