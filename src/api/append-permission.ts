/**
 * Which events a principal may append, whatever door it comes through (the HTTP intent routes, the KurrentDB gRPC
 * face). One rule: analysts and auditors append nothing; operators (and admins) record operator intents and
 * driver observations; an agent reports only its in-band GPU observations, and only for the nodes its token names.
 */
import { driverObservationEvents } from '../../events/index.js';
import { agentMayReportFor, type Principal, type Role } from './tokens.js';

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
  'MaintenanceWindowSet',
  'TopologyDeclared',
  'AlarmAcknowledged',
]);

/** What a driver reports: operators may record these through `POST /v1/observations`. */
export const observationTypes: ReadonlySet<string> = new Set(driverObservationEvents.map((definition) => definition.type));

/**
 * Roles that may read the log's events through the KurrentDB face. Operators and agents write and read nothing of
 * the log, as over HTTP; analysts read events there (a KurrentDB consumer needs them), where the HTTP API gives
 * them the live feed's envelopes only.
 */
export const logReaderRoles: readonly Role[] = ['analyst', 'auditor', 'admin'];

/** Why an append is refused: the role appends nothing, not this type, or not to this stream (an agent's node scope). */
export interface AppendRefusal {
  subject: 'role' | 'type' | 'stream';
  message: string;
}

/**
 * Why `principal` may not append an event of `type` to `stream`, or null when it may. An agent's stream must be
 * `node-<nodeId>` of a node its token speaks for.
 */
export function appendRefusal(principal: Principal, stream: string, type: string): AppendRefusal | null {
  const refuse = (subject: AppendRefusal['subject'], message: string): AppendRefusal => ({ subject, message });
  switch (principal.role) {
    case 'analyst':
    case 'auditor':
      return refuse('role', `role ${principal.role} reads the log and appends nothing`);
    case 'operator':
    case 'admin':
      return operatorIntentTypes.has(type) || observationTypes.has(type) ? null : refuse('type', `role ${principal.role} records operator intents and driver observations, not ${type}`);
    case 'agent': {
      const nodeId = stream.startsWith('node-') ? stream.slice('node-'.length) : null;
      if (nodeId === null || !agentMayReportFor(principal, nodeId)) {
        return refuse('stream', `agent ${principal.id} may not report for ${nodeId === null ? stream : `node ${nodeId}`} (its token's node scope: ${(principal.nodes ?? []).join(', ') || 'none'})`);
      }
      if (!agentObservationTypes.has(type)) return refuse('type', `agents report ${[...agentObservationTypes].join(' and ')} only, not ${type}`);
      return null;
    }
    default: {
      const unknown: never = principal.role;
      return refuse('role', `unknown role ${String(unknown)}`);
    }
  }
}
