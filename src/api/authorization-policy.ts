/**
 * The one authorization policy of the ledger: every door (the HTTP routes, the live feed, the KurrentDB gRPC face)
 * asks these functions the same question and acts on the answer, so a principal can do through one door exactly
 * what it can do through another.
 *
 * Guarantees:
 * - An append is judged on (principal, event type, target stream, payload). An intent's stream is derived from its
 *   payload (`node-<nodeId>`, `rack-<rack>`, `alarm-<alarmId>`); an append to any other stream is refused
 *   (`API_STREAM_MISMATCH`), so a projection that believes the payload's `nodeId` is never lied to by the stream.
 * - Streams the system writes (poll batches, rollouts and their steps, capacity, provisioning, leases, EBOM imports)
 *   refuse every append through a door (`API_STREAM_RESERVED`): their writers are in-process components.
 * - An application's events (`ApplicationEvent`: a KurrentDB client's own types, JSON or binary) go to application
 *   streams only, never to a fleet stream and never under a type of the catalogue, by operators and admins, through the
 *   KurrentDB face only (the door that keeps their streams' metadata, deletes and tombstones).
 * - What the log shows a caller is one of three views (payloads, envelopes without `data`, nothing), by role; a
 *   caller without credentials sees nothing unless the server was started to show anonymous callers envelopes.
 * - Who reads the read models (nodes, liveness, alarms, drift, compliance, inventory, rollouts) is answered here too
 *   (`readsReadModels`): operators read what they act on, analysts what they study; payloads stay the auditors'.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ApplicationEvent, fleetCatalogue, isFleetStream, nodeIdSchema, type Actor } from '../../events/index.js';
import { ApiError } from './api-error.js';
import { agentObservationTypes, observationTypes, operatorIntentTypes } from './append-permission.js';
import { agentMayReportFor, roles, type Principal, type Role } from './tokens.js';

/** The codes an authorization refusal carries (each in `apiErrorCatalogue`, with its typed details). */
export type AuthorizationCode = 'API_UNAUTHORIZED' | 'API_FORBIDDEN' | 'API_STREAM_MISMATCH' | 'API_STREAM_RESERVED';
export type AuthorizationRefusal = ApiError<AuthorizationCode>;

/** What is asked before an event is appended, whatever the door. `principal` null: no credentials. */
export interface AppendQuestion {
  principal: Principal | null;
  type: string;
  stream: string;
  data: unknown;
  /**
   * The door asking. Only the KurrentDB face records `ApplicationEvent`s: it is the door that keeps their streams'
   * KurrentDB semantics (stream metadata, deletes, tombstones), which an append through another door would bypass.
   */
  door?: 'http' | 'kurrent';
}

/**
 * Stream prefixes the ledger's own components write, with the component: no door may append there. `$` streams are
 * KurrentDB's system streams, which the ledger does not have and nobody may create.
 */
const reservedPrefixes: ReadonlyArray<{ prefix: string; owner: string }> = [
  { prefix: 'polls-', owner: 'the poller (poll outcome batches)' },
  { prefix: 'rollout-', owner: 'the firmware rollout saga' },
  { prefix: 'fwstep-', owner: 'the firmware rollout saga (node steps)' },
  { prefix: 'capacity-', owner: 'the sagas (disruption capacity)' },
  { prefix: 'provision-', owner: 'the provisioning saga' },
  { prefix: 'rotation-', owner: 'the credential rotation saga' },
  { prefix: 'credstep-', owner: 'the credential rotation saga (BMC steps)' },
  { prefix: 'saga-', owner: 'the sagas' },
  { prefix: 'lease-', owner: 'the poll lease keeper' },
  { prefix: 'ebom-', owner: 'the EBOM import (POST /v1/ebom)' },
  { prefix: 'projection-', owner: 'the projections' },
  { prefix: 'witness-', owner: 'the checkpoint witnesses' },
  { prefix: 'site-', owner: 'the site heartbeat (a site ledger federated by a centre)' },
  { prefix: '$', owner: 'the server' },
];

/** The component that owns `stream`, or null when it is not a stream the system writes. */
export function reservedStreamOwner(stream: string): string | null {
  return reservedPrefixes.find(({ prefix }) => stream.startsWith(prefix))?.owner ?? null;
}

/** The stream of an alarm's acknowledgements (alarm ids use `:`, which streams allow; anything else is hashed). */
export function alarmStream(alarmId: string): string {
  const candidate = `alarm-${alarmId}`;
  return /^[A-Za-z0-9][A-Za-z0-9._:@-]*$/.test(candidate) && candidate.length <= 200 ? candidate : `alarm-${createHash('sha256').update(alarmId).digest('hex').slice(0, 32)}`;
}

const aboutNode = z.object({ nodeId: nodeIdSchema });
const aboutRack = z.object({ rack: z.string().min(1).max(64) });
const aboutAlarm = z.object({ alarmId: z.string().min(1).max(200) });

/** The intents a door may record, by what their stream is derived from. */
const nodeIntentTypes = ['NodeRegistered', 'NodeDecommissioned', 'NodeCordoned', 'NodeUncordoned', 'NodeQuarantined', 'NodeReleased', 'LockoutLatchCleared', 'BmcCertificateAccepted', 'MaintenanceWindowSet'] as const;
type RecordableIntent = (typeof nodeIntentTypes)[number] | 'TopologyDeclared' | 'AlarmAcknowledged';

function isRecordableIntent(type: string): type is RecordableIntent {
  return operatorIntentTypes.has(type) && ((nodeIntentTypes as readonly string[]).includes(type) || type === 'TopologyDeclared' || type === 'AlarmAcknowledged');
}

/**
 * The stream an intent belongs in, from its payload; null when the payload does not name its subject (it then
 * fails its schema at the store, which names the field).
 */
export function derivedIntentStream(type: RecordableIntent, data: unknown): string | null {
  switch (type) {
    case 'NodeRegistered':
    case 'NodeDecommissioned':
    case 'NodeCordoned':
    case 'NodeUncordoned':
    case 'NodeQuarantined':
    case 'NodeReleased':
    case 'LockoutLatchCleared':
    case 'BmcCertificateAccepted':
    case 'MaintenanceWindowSet': {
      const parsed = aboutNode.safeParse(data);
      return parsed.success ? `node-${parsed.data.nodeId}` : null;
    }
    case 'TopologyDeclared': {
      const parsed = aboutRack.safeParse(data);
      return parsed.success ? `rack-${parsed.data.rack}` : null;
    }
    case 'AlarmAcknowledged': {
      const parsed = aboutAlarm.safeParse(data);
      return parsed.success ? alarmStream(parsed.data.alarmId) : null;
    }
    default: {
      const unknown: never = type;
      return String(unknown);
    }
  }
}

function forbidden(principal: Principal, allowed: readonly Role[], message: string): AuthorizationRefusal {
  return new ApiError('API_FORBIDDEN', { role: principal.role, allowed: [...allowed] }, message);
}

/** The roles that append anything at all (each only what `appendRefusal` allows it). */
export const writerRoles: readonly Role[] = ['operator', 'agent', 'admin'];

const unauthenticated = (): AuthorizationRefusal => new ApiError('API_UNAUTHORIZED', { reason: 'missing' }, 'appends need credentials (a bearer token, or over KurrentDB TLS the principal and its token)');

/**
 * Why `principal` may append nothing at all, or null: the part of `appendRefusal` that does not depend on the event,
 * asked by a door before it reads an append's events (the HTTP API's route access is made from `writerRoles`).
 */
export function writerRefusal(principal: Principal | null): AuthorizationRefusal | null {
  if (principal === null) return unauthenticated();
  return writerRoles.includes(principal.role) ? null : forbidden(principal, writerRoles, `role ${principal.role} reads and appends nothing`);
}

/**
 * Why `question` is refused, or null when the append may go on to validation and the store. Checked in this order:
 * credentials, the role appends at all, the role may record this type, the stream is not the system's, the stream is
 * the one the payload derives, an agent's node scope.
 */
export function appendRefusal(question: AppendQuestion): AuthorizationRefusal | null {
  const { principal, type, stream, data } = question;
  const writer = writerRefusal(principal);
  if (writer !== null || principal === null) return writer ?? unauthenticated();
  switch (principal.role) {
    case 'analyst':
    case 'auditor':
      return forbidden(principal, writerRoles, `role ${principal.role} reads and appends nothing`);
    case 'operator':
    case 'admin':
      if (!operatorIntentTypes.has(type) && !observationTypes.has(type) && type !== ApplicationEvent.type) {
        return forbidden(principal, [], `role ${principal.role} records operator intents, driver observations and application events, not ${type}`);
      }
      break;
    case 'agent':
      if (!agentObservationTypes.has(type)) return forbidden(principal, ['operator', 'admin'], `agents report ${[...agentObservationTypes].join(' and ')} only, not ${type}`);
      break;
    default: {
      const unknown: never = principal.role;
      return forbidden(principal, writerRoles, `unknown role ${String(unknown)}`);
    }
  }
  const owner = reservedStreamOwner(stream);
  if (owner !== null) return new ApiError('API_STREAM_RESERVED', { stream, owner, type }, `${stream} is written by ${owner} only; ${type} is not appended there`);
  if (type === ApplicationEvent.type) return applicationRefusal(principal, stream, data, question.door);
  // An observation's payload does not name its node: the node is the stream's, and it must be a node stream.
  const derived = isRecordableIntent(type) ? derivedIntentStream(type, data) : stream.startsWith('node-') ? stream : 'node-<nodeId>';
  if (derived !== null && derived !== stream) {
    return new ApiError('API_STREAM_MISMATCH', { stream, derivedStream: derived, type }, `${type} belongs in ${derived} (derived from its content), not ${stream}`);
  }
  if (principal.role === 'agent') {
    const nodeId = stream.slice('node-'.length);
    if (!agentMayReportFor(principal, nodeId)) {
      return forbidden(principal, ['operator', 'admin'], `agent ${principal.id} may not report for node ${nodeId} (its token's node scope: ${(principal.nodes ?? []).join(', ') || 'none'})`);
    }
  }
  return null;
}

/**
 * Why an application event (a KurrentDB client's event in a stream outside the fleet's) is refused, or null. Operators
 * and admins record them (the role check before this), through the KurrentDB face only, to application streams only,
 * and never under a type of the catalogue: a reader filtering the log by a fleet type must find only the fleet's
 * validated events.
 */
function applicationRefusal(principal: Principal, stream: string, data: unknown, door: AppendQuestion['door']): AuthorizationRefusal | null {
  const type = ApplicationEvent.type;
  if (door !== 'kurrent') return forbidden(principal, [], `${type}s are appended through the KurrentDB face, which keeps their streams' metadata, deletes and tombstones`);
  if (isFleetStream(stream)) return new ApiError('API_STREAM_RESERVED', { stream, owner: "the fleet (the catalogue's events, each validated)", type }, `${stream} is a fleet stream; ${type}s go to application streams`);
  const named = typeof data === 'object' && data !== null ? ('type' in data ? data.type : undefined) : undefined;
  if (typeof named === 'string' && fleetCatalogue.get(named)) {
    return forbidden(principal, [], `${named} is an event type of the fleet's catalogue: it is appended as itself, validated, to its fleet stream, never as an application's event`);
  }
  return null;
}

/** What the log shows a caller: events with their payloads, envelopes only (`data` null), or nothing. */
export type LogView = 'payloads' | 'envelopes' | 'none';

/** What a caller without credentials may read: nothing (the default), or envelopes when the server opted in. */
export type AnonymousReads = 'none' | 'envelopes';

/**
 * The view of the log a principal has. Payloads are the log's (BMC addresses, credential names, reasons): auditors
 * and admins read them; analysts and operators see that something happened (envelopes: the dashboard's live feed,
 * who recorded what and when); agents write and read nothing of the log.
 */
export function logView(principal: Principal | null, anonymousReads: AnonymousReads = 'none'): LogView {
  if (principal === null) return anonymousReads;
  switch (principal.role) {
    case 'auditor':
    case 'admin':
      return 'payloads';
    case 'analyst':
    case 'operator':
      return 'envelopes';
    case 'agent':
      return 'none';
    default: {
      const unknown: never = principal.role;
      return unknown;
    }
  }
}

/**
 * Whether a role reads the read models (the projections' answers). Operators read what they act on (the alarm they
 * acknowledge, the node they cordon, the rollout they approve); analysts read them all; admins everything. Auditors
 * read the log itself (payloads), agents nothing.
 */
export function readsReadModels(role: Role): boolean {
  switch (role) {
    case 'operator':
    case 'analyst':
    case 'admin':
      return true;
    case 'auditor':
    case 'agent':
      return false;
    default: {
      const unknown: never = role;
      return unknown;
    }
  }
}

/** The roles that read the read models (the HTTP query and rollout routes' access lists are made from it). */
export function rolesReadingReadModels(): Role[] {
  return roles.filter(readsReadModels);
}

/** The roles whose view is at least `view` (the HTTP routes' access lists are made from it). */
export function rolesWithView(view: Exclude<LogView, 'none'>): Role[] {
  const rank: Record<LogView, number> = { none: 0, envelopes: 1, payloads: 2 };
  return roles.filter((role) => rank[logView({ id: role, role })] >= rank[view]);
}

/** What a read of the log comes to: the view the caller gets, or the refusal (401 without credentials, else 403). */
export type ReadVerdict = { view: 'payloads' | 'envelopes' } | { view: 'none'; refusal: AuthorizationRefusal };

export function readVerdict(principal: Principal | null, anonymousReads: AnonymousReads = 'none'): ReadVerdict {
  const view = logView(principal, anonymousReads);
  if (view !== 'none') return { view };
  if (principal === null) return { view, refusal: new ApiError('API_UNAUTHORIZED', { reason: 'missing' }, 'reading the log needs credentials') };
  return { view, refusal: forbidden(principal, rolesWithView('envelopes'), `role ${principal.role} may not read the log`) };
}

/**
 * Who the ledger records as the author of an append the policy allowed: the principal, as a driver for observations
 * (`<door>:<node>@<principal>`), so every door attributes the same append the same way.
 */
export function appendActor(principal: Principal, stream: string, type: string, door: 'http' | 'kurrent'): Actor {
  if (observationTypes.has(type)) return { kind: 'driver', id: `${door}:${stream.replace(/^node-/, '')}@${principal.id}` };
  return operatorActor(principal);
}

/** The operator a principal's intent is recorded as: who asked, with what role, and through which door if not ours. */
export function operatorActor(principal: Principal): Extract<Actor, { kind: 'operator' }> {
  return { kind: 'operator', id: principal.id, role: principal.role, ...(principal.via ? { via: principal.via } : {}) };
}
