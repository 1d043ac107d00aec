/**
 * The event types each writer may append, whatever door it comes through: operators (and admins) record operator
 * intents and driver observations; an agent reports only its in-band GPU observations. The rule that uses them, with
 * the stream and payload, is `authorization-policy.ts`.
 */
import { driverObservationEvents } from '../../events/index.js';

/** What an in-band agent on a host may report (the `agent` command's observations). */
export const agentObservationTypes: ReadonlySet<string> = new Set(['GpuTelemetryObserved', 'GpuXidObserved']);

/** The intents the operator routes record (`POST /v1/nodes...`, `/v1/racks/...`, `/v1/alarms/.../ack`). */
export const operatorIntentTypes: ReadonlySet<string> = new Set([
  'NodeRegistered',
  'NodeDecommissioned',
  'NodeCordoned',
  'NodeUncordoned',
  'NodeQuarantined',
  'NodeReleased',
  'LockoutLatchCleared',
  'BmcCertificateAccepted',
  'MaintenanceWindowSet',
  'TopologyDeclared',
  'AlarmAcknowledged',
]);

/** What a driver reports: operators may record these through `POST /v1/observations`. */
export const observationTypes: ReadonlySet<string> = new Set(driverObservationEvents.map((definition) => definition.type));
