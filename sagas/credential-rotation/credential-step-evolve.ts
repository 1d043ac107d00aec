/**
 * One BMC's credential rotation (`credstep-<rotationId>-<nodeId>`), folded from its events. Pure: imports no I/O.
 *
 * What the state keeps is what the decisions need to be safe after any crash:
 * - the credential the step authenticates with (`from`: the version in force, or a factory one a fallback proved) and
 *   the new version (`to`);
 * - the current change attempt (its intent key) and what the BMC answered to it, if anything was recorded;
 * - every login's result since the last intent (`results`), and over the whole step the failed logins and the logins
 *   tried without a recorded answer (`unknownLogins`: each may have been a failure, and is counted as one).
 */
import { assertNever, isCredentialStepEvent, type PasswordRefusal } from '../../events/index.js';
import type { SagaEvent } from '../saga-event.js';

export type CredentialStepPhase = 'new' | 'active' | 'rotated' | 'held';

/** A credential as the ledger names it: a reference and a version of it. */
export interface CredentialId {
  credentialRef: string;
  version: string;
}

export type LoginResult = 'accepted' | 'refused' | 'unknown';

export interface CredentialStepState {
  version: number;
  phase: CredentialStepPhase;
  rotationId?: string;
  nodeId?: string;
  slotId?: string;
  /** What the step authenticates with: the node's version in force, or the factory credential a fallback proved. */
  from?: CredentialId;
  /** The new version (of the node's own reference). */
  to?: CredentialId;
  toDigest?: string;
  /** When the fence began (the step's start, or an operator's retry): the change waits `fenceGraceMs` after it. */
  fenceSince?: number;
  /** When the step (or its retry) started: its deadline counts from here. */
  startedAt?: number;
  attempt: number;
  key?: string;
  intentAt?: number;
  /** What the BMC answered to the current attempt's change, as recorded. */
  answer: 'none' | 'accepted' | 'refused' | 'unknown';
  refusal?: PasswordRefusal;
  accountPath?: string;
  /** Logins the BMC refused, over the whole step (the lockout counts them, whatever the attempt). */
  failedLogins: number;
  /** Logins tried whose answer was never recorded (an engine killed meanwhile): each counted as a possible failure. */
  unknownLogins: number;
  /**
   * Failed and unanswered logins since the BMC last took one (an accepted login, or a change it answered after taking
   * the credential): what its lockout counts, since a BMC counts failures in a row and starts over at a good login.
   */
  consecutive: number;
  /** A login (or an answered change) was accepted in this step: the poller's latch no longer counts. */
  anyAccepted: boolean;
  /** When the last login accepted was recorded (an intent recorded in the same append follows its proof at once). */
  lastAcceptedAt?: number;
  /**
   * The current change was recorded in the same append as the login that proved its credential: the change went out
   * right after that proof, so a change never answered was not a failed login.
   */
  intentAfterProof: boolean;
  /** A login recorded as tried, its answer not (yet) recorded. */
  pending?: CredentialId & { purpose: string };
  /** Each credential's login result since the last change intent (what the BMC holds now). */
  results: Record<string, LoginResult>;
  fallbackTried: boolean;
  lastUnreachableAt?: number;
  /** The credential the BMC was last proven (or, before any change, recorded) to hold; null while a change is unsettled. */
  inForce: CredentialId | null;
  hold?: string;
  cause?: string;
  /** Change intents recorded, in order (each is sent at most once). */
  intents: string[];
}

export function initialCredentialStep(): CredentialStepState {
  return { version: 0, phase: 'new', attempt: 0, answer: 'none', failedLogins: 0, unknownLogins: 0, consecutive: 0, anyAccepted: false, intentAfterProof: false, results: {}, fallbackTried: false, inForce: null, intents: [] };
}

export function credentialStepStream(rotationId: string, nodeId: string): string {
  return `credstep-${rotationId}-${nodeId}`;
}

export function credentialKey(credential: CredentialId): string {
  return `${credential.credentialRef}\u0000${credential.version}`;
}

export function sameCredential(a: CredentialId | null | undefined, b: CredentialId | null | undefined): boolean {
  return !!a && !!b && a.credentialRef === b.credentialRef && a.version === b.version;
}

/** A login tried and never answered counts as unknown from the next event on (or when a restarted engine decides). */
export function settlePending(state: CredentialStepState): CredentialStepState {
  if (!state.pending) return state;
  const { pending } = state;
  const key = credentialKey(pending);
  return { ...state, pending: undefined, unknownLogins: state.unknownLogins + 1, consecutive: state.consecutive + 1, results: { ...state.results, [key]: state.results[key] === 'accepted' ? 'accepted' : 'unknown' } };
}

export function evolveCredentialStep(state: CredentialStepState, event: SagaEvent): CredentialStepState {
  const at = event.recordedAt;
  let next: CredentialStepState = { ...state, version: state.version + 1 };
  // Events of other types in the stream count toward its version only.
  if (!isCredentialStepEvent(event)) return next;
  if (event.type !== 'BmcLoginProbed') next = settlePending(next);
  switch (event.type) {
    case 'CredentialStepStarted': {
      const data = event.data;
      next.phase = 'active';
      next.rotationId = data.rotationId;
      next.nodeId = data.nodeId;
      next.slotId = data.slotId;
      next.from = { credentialRef: data.credentialRef, version: data.fromVersion };
      next.to = { credentialRef: data.credentialRef, version: data.toVersion };
      next.toDigest = data.toDigest;
      next.fenceSince = at;
      next.startedAt = at;
      // What the record says the BMC holds (the poller used it): a belief, proven by the preflight login.
      next.inForce = next.from;
      break;
    }
    case 'BmcLoginAttempted': {
      const data = event.data;
      next.pending = { credentialRef: data.credentialRef, version: data.version, purpose: data.purpose };
      if (data.purpose === 'fallback') next.fallbackTried = true;
      break;
    }
    case 'BmcLoginProbed': {
      const data = event.data;
      const credential = { credentialRef: data.credentialRef, version: data.version };
      const matches = next.pending && sameCredential(next.pending, credential);
      if (!matches) next = settlePending(next);
      next.pending = undefined;
      const key = credentialKey(credential);
      if (data.result === 'accepted') {
        next.results = { ...next.results, [key]: 'accepted' };
        next.inForce = credential;
        next.consecutive = 0;
        next.anyAccepted = true;
        next.lastAcceptedAt = at;
        if (data.accountPath) next.accountPath = data.accountPath;
        // A fallback credential the BMC took is what the change authenticates with from now on.
        if (data.purpose === 'fallback') next.from = credential;
      } else if (data.result === 'refused') {
        next.results = { ...next.results, [key]: 'refused' };
        next.failedLogins += 1;
        next.consecutive += 1;
        if (sameCredential(next.inForce, credential)) next.inForce = null;
      } else {
        next.lastUnreachableAt = at;
      }
      break;
    }
    case 'BmcPasswordChangeRequested': {
      const data = event.data;
      next.intentAfterProof = next.lastAcceptedAt === at && next.from !== undefined && next.results[credentialKey({ credentialRef: data.fromRef, version: data.fromVersion })] === 'accepted';
      next.attempt = data.attempt;
      next.key = data.idempotencyKey;
      next.intentAt = data.at;
      next.answer = 'none';
      next.refusal = undefined;
      next.results = {};
      next.from = { credentialRef: data.fromRef, version: data.fromVersion };
      next.accountPath = data.accountPath;
      next.inForce = null;
      next.intents = [...state.intents, data.idempotencyKey];
      break;
    }
    case 'BmcPasswordChangeAccepted':
      if (event.data.idempotencyKey === next.key && next.answer === 'none') {
        next.answer = 'accepted';
        // The change was authenticated: the BMC took `from`, and starts its failure count over.
        next.consecutive = 0;
        next.anyAccepted = true;
      }
      break;
    case 'BmcPasswordChangeFailed': {
      const data = event.data;
      if (data.idempotencyKey !== next.key || next.answer !== 'none') break;
      next.answer = data.outcomeKnown ? 'refused' : 'unknown';
      next.refusal = data.reason;
      next.cause = `${data.reason}: ${data.message}`.slice(0, 2000);
      if (data.outcomeKnown && (data.reason === 'unauthorized' || data.reason === 'account-locked')) {
        // The change was authenticated with `from`, and refused as a login: a failed login, nothing changed.
        next.failedLogins += 1;
        next.consecutive += 1;
        if (next.from) next.results = { ...next.results, [credentialKey(next.from)]: 'refused' };
      } else if (data.outcomeKnown) {
        // Refused after the BMC took `from` (policy, busy, ...): it holds `from`, unchanged.
        next.inForce = next.from ?? null;
        next.consecutive = 0;
        next.anyAccepted = true;
        if (next.from) next.results = { ...next.results, [credentialKey(next.from)]: 'accepted' };
      }
      break;
    }
    case 'BmcPasswordChanged':
      next.phase = 'rotated';
      next.inForce = next.to ?? null;
      break;
    case 'CredentialStepHeld': {
      const data = event.data;
      next.phase = 'held';
      next.hold = data.hold;
      next.cause = data.reason;
      next.inForce = data.inForce === null ? null : { credentialRef: data.credentialRef, version: data.inForce };
      break;
    }
    default:
      return assertNever(event);
  }
  return next;
}
