/** The event types the alarms projection reads: liveness and drift facts, topology, GPU errors, operator actions, held steps, set-aside events, integrity and certificate alarms. */
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
  ...certificateAlarmEventTypes,
] as const;
