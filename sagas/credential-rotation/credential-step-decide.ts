/**
 * What one BMC's rotation step does next, and the decider that records it: pure functions of the step's state, the
 * time and the plan, so a restarted engine makes the choice the dead one would have and every rule is checked without
 * a BMC (`test/sagas/credential-rotation-rules.unit.test.ts`, fast-check).
 *
 * The rules:
 * - **Intent before effect, one change per intent.** A change (PATCH) is sent only right after its intent
 *   (`BmcPasswordChangeRequested`, a new key per attempt) is recorded, and an intent is recorded only when the BMC is
 *   known to hold the credential the change authenticates with: before any change, after a login with it was accepted,
 *   or after the previous change was answered with a refusal (nothing changed) or proven not applied (a login with the
 *   old credential accepted after it). An intent whose answer was not recorded is settled by logging in, never by
 *   sending again.
 * - **Logins spend the lockout budget, and are counted.** Every login whose answer could be a failure is recorded
 *   before it is tried; one tried and never answered counts as a failure. No such login is tried when one more
 *   failure (counting the poller's latch on the version in force) would reach the BMC's lockout threshold.
 * - **At most one failed login per BMC per rotation** when nothing but this step changes the BMC's password: an
 *   unsettled change is settled by logging in with the version the record says is likelier (the new one after a 2xx or
 *   a timeout, the old one when nothing was recorded after the intent), then the other: one of them is what the BMC
 *   holds; the same credential is not tried twice against one state of the BMC (but for a login with the new version
 *   left unanswered after a 2xx, which cannot fail unless someone else changed the password); and after any failed
 *   or unanswered login no new change is attempted (a second unsettled change could cost a second failure).
 * - **Fenced until settled.** The step starts by fencing the node (the poller logs in to nothing), waits
 *   `fenceGraceMs`, and ends either with the new version proven (`BmcPasswordChanged`), or held with the version the
 *   BMC was last proven to hold, or, when that is not known, held and still fenced.
 */
import { refuse, record, type Decider, type Decision } from '../decider.js';
import type { CredentialStepEvent, DataOf, EventShape, PasswordRefusal } from '../../events/index.js';
import { credentialKey, evolveCredentialStep, initialCredentialStep, sameCredential, settlePending, type CredentialId, type CredentialStepState } from './credential-step-evolve.js';

export interface CredentialStepContext {
  rotationId: string;
  nodeId: string;
  fenceGraceMs: number;
  lockoutThreshold: number;
  retryBudget: number;
  stepDeadlineMs: number;
  /** The poller's latch holds the version in force (it failed once already): not tried again; it counts as one failure. */
  latched: boolean;
  /** The factory / site-root credential, when the plan allows the fallback and the store holds it. */
  factory?: CredentialId | undefined;
  /** Wait after a refusal the BMC may lift (busy) before the next attempt. */
  retryBackoffMs: number;
  /** Wait after a login or change the BMC did not answer before trying again. */
  unreachableRetryMs: number;
}

export type CredentialHold = DataOf<'CredentialStepHeld'>['hold'];
export type LoginPurpose = DataOf<'BmcLoginAttempted'>['purpose'];

export type CredentialAction =
  | { kind: 'start' }
  | { kind: 'wait' }
  | { kind: 'login'; credential: CredentialId; purpose: LoginPurpose }
  | { kind: 'change'; attempt: number; key: string; from: CredentialId; to: CredentialId; accountPath: string }
  | { kind: 'changed' }
  | { kind: 'hold'; hold: CredentialHold; inForce: CredentialId | null; reason: string }
  | { kind: 'done' };

export function changeKey(rotationId: string, nodeId: string, attempt: number): string {
  return `${rotationId}:${nodeId}:${attempt}`;
}

/**
 * Failed and unanswered logins in a row, with the poller's latch: what the BMC's lockout has (or may have) counted. A
 * BMC counts failures in a row and starts over when it takes a login, so an accepted login (or a change it answered
 * after taking the credential) starts this count over. A change whose answer was never recorded counts: it was
 * authenticated with `from`, and its answer may have been a 401. The latch counts until the BMC took a login here.
 */
export function loginsSpent(state: CredentialStepState, context: Pick<CredentialStepContext, 'latched'>): number {
  const settled = settlePending(state);
  return settled.consecutive + (unansweredChangeMayHaveFailed(settled) ? 1 : 0) + (context.latched && !settled.anyAccepted ? 1 : 0);
}

/** The next action and when it is due (`due` <= `now`: now). */
export function nextCredentialAction(current: CredentialStepState, now: number, context: CredentialStepContext): { action: CredentialAction; due: number } {
  const at = (action: CredentialAction, due = now): { action: CredentialAction; due: number } => ({ action, due });
  if (current.phase === 'rotated' || current.phase === 'held') return at({ kind: 'done' });
  if (current.phase === 'new') return at({ kind: 'start' });
  // A login recorded as tried with no answer after it: an engine died meanwhile; it may have failed.
  const s = settlePending(current);
  const F = s.from!;
  const T = s.to!;
  const hold = (hold: CredentialHold, inForce: CredentialId | null, reason: string): { action: CredentialAction; due: number } => at({ kind: 'hold', hold, inForce, reason });
  const fenceEnds = (s.fenceSince ?? now) + context.fenceGraceMs;
  if (now < fenceEnds) return at({ kind: 'wait' }, fenceEnds);
  const openIntent = s.key !== undefined && s.answer !== 'refused';
  const risky = loginsSpent(s, context) + 1 < context.lockoutThreshold;
  if (s.startedAt !== undefined && now - s.startedAt > context.stepDeadlineMs) {
    return hold('deadline-exceeded', openIntent ? null : proven(s, F), `not settled within the step deadline of ${context.stepDeadlineMs} ms`);
  }
  if (s.lastUnreachableAt !== undefined && now < s.lastUnreachableAt + context.unreachableRetryMs) return at({ kind: 'wait' }, s.lastUnreachableAt + context.unreachableRetryMs);
  const result = (credential: CredentialId) => s.results[credentialKey(credential)];
  const noFailureYet = s.failedLogins + s.unknownLogins === 0 && !unansweredChangeMayHaveFailed(s);
  const mayAttempt = s.intents.length < 1 + context.retryBudget;
  const change = (): { action: CredentialAction; due: number } => {
    // The change authenticates with `from`: a login too, under the same budget.
    if (!risky) return hold('not-applied', F, `no change sent: one more failed login could reach the lockout threshold of ${context.lockoutThreshold}`);
    const attempt = s.intents.length + 1;
    return at({ kind: 'change', attempt, key: changeKey(context.rotationId, context.nodeId, attempt), from: F, to: T, accountPath: s.accountPath ?? '' });
  };

  // 1. A change whose outcome is not settled: the new version once, then the old; whichever the BMC takes is what it holds.
  if (openIntent) {
    if (result(T) === 'accepted') return at({ kind: 'changed' });
    if (result(F) === 'accepted') {
      // Proven not applied. Another attempt only while no login has failed (a second unsettled change could cost one).
      if (noFailureYet && mayAttempt) return change();
      return hold('not-applied', F, `the BMC still takes ${F.version} after the change ${s.key}; ${noFailureYet ? 'attempts exhausted' : 'no new attempt after a failed login'}`);
    }
    // What the record says is likely: a change answered 2xx, or sent and never answered (a timeout), most likely took
    // (the new version first); a change with nothing recorded after its intent may never have gone out (the old first:
    // if it still logs in, the change is proven not applied and may be sent again).
    const order = s.answer === 'none' ? [F, T] : [T, F];
    for (const candidate of order) {
      // A login with the new version that was tried and never answered is tried again only when the BMC answered the
      // change 2xx: it then holds the new version, and that login cannot fail unless someone else changed it.
      const again = candidate === T && s.answer === 'accepted' && result(T) === 'unknown';
      if (result(candidate) !== undefined && !again) continue;
      if (!risky) return hold('unknown-password', null, `the change ${s.key} is unsettled and one more failed login could reach the lockout threshold of ${context.lockoutThreshold}`);
      return at({ kind: 'login', credential: candidate, purpose: candidate === T && s.answer === 'accepted' ? 'verify' : 'resolve' });
    }
    return hold('unknown-password', null, `neither ${T.version} nor ${F.version} logs in after the change ${s.key}`);
  }

  // 2. The change was refused (nothing changed on the BMC).
  if (s.key !== undefined && s.answer === 'refused') {
    const refusal: PasswordRefusal = s.refusal ?? 'rejected';
    if (refusal === 'account-locked') return hold('account-locked', null, s.cause ?? 'the account is locked');
    if (refusal === 'busy') {
      if (noFailureYet && mayAttempt) return { ...change(), due: Math.max(now, (s.intentAt ?? now) + context.retryBackoffMs) };
      return hold('refused', F, s.cause ?? 'busy');
    }
    if (refusal !== 'unauthorized') return hold('refused', F, s.cause ?? refusal);
    // Unauthorized: the credential it was sent with is refused; the fallback below, if allowed.
  }

  // 3. No change open: prove the credential the change will authenticate with, then change.
  const fromResult = result(F);
  if (fromResult === 'accepted') return s.accountPath ? change() : hold('refused', F, `the BMC takes ${F.version} but its AccountService has no account for the user (no change possible over Redfish)`);
  const isFactory = context.factory !== undefined && sameCredential(F, context.factory);
  // The node's record: the poller's latch holds the version in force, so it already failed once; it is not tried again.
  const knownFailing = context.latched && !isFactory && s.intents.length === 0;
  if (!knownFailing && (fromResult === undefined || (fromResult === 'unknown' && s.intents.length === 0 && s.key === undefined))) {
    // Nothing changed on the BMC since `from` was put in force: a login with it is what the record expects to pass.
    if (!risky) return hold('unknown-password', null, `one more failed login could reach the lockout threshold of ${context.lockoutThreshold}`);
    return at({ kind: 'login', credential: F, purpose: isFactory ? 'fallback' : 'preflight' });
  }
  if (context.factory && !s.fallbackTried && !isFactory && risky) return at({ kind: 'login', credential: context.factory, purpose: 'fallback' });
  return hold('unknown-password', null, knownFailing ? `the poller's latch holds ${F.version} and no fallback is allowed or left` : `${F.version} is refused${s.fallbackTried ? ' and so was the fallback' : ''}`);
}

/** What the BMC holds while no change is open: a credential a login proved, or `from` when nothing was changed yet. */
function proven(s: CredentialStepState, from: CredentialId): CredentialId | null {
  if (s.inForce && s.results[credentialKey(s.inForce)] === 'accepted') return s.inForce;
  const unchanged = s.intents.length === 0 || (s.answer === 'refused' && s.refusal !== 'unauthorized' && s.refusal !== 'account-locked');
  const doubted = s.results[credentialKey(from)] === 'refused' || s.results[credentialKey(from)] === 'unknown';
  return unchanged && !doubted ? from : null;
}

/**
 * A change whose answer was never recorded may have been answered 401 (a failed login), unless it went out in the same
 * append as the login that proved its credential, or a login was accepted after it (either version: the BMC took it).
 */
function unansweredChangeMayHaveFailed(state: CredentialStepState): boolean {
  if (state.key === undefined || state.answer !== 'none' || state.intentAfterProof) return false;
  return !Object.values(state.results).includes('accepted');
}

// ---- the decider: what the effector may record, checked against `nextCredentialAction` ----

export type CredentialStepCommand =
  | { kind: 'start'; now: number; data: DataOf<'CredentialStepStarted'> }
  | { kind: 'attempt-login'; now: number; credential: CredentialId; purpose: LoginPurpose }
  | { kind: 'record-login'; now: number; credential: CredentialId; purpose: LoginPurpose; result: 'accepted' | 'refused' | 'unreachable'; code?: string; accountPath?: string }
  | { kind: 'request-change'; now: number; attempt: number; via: 'redfish-account-service' | 'ipmi-user-set' }
  | { kind: 'record-change'; now: number; key: string; answer: { accepted: true; httpStatus: number } | { accepted: false; reason: PasswordRefusal; outcomeKnown: boolean; status?: number; messageIds?: string[]; message: string } }
  | { kind: 'changed'; now: number }
  | { kind: 'hold'; now: number };

export interface CredentialStepRefusal {
  code: 'CREDENTIAL_STEP_NOT_NOW';
  message: string;
  /** What the step would do now instead. */
  next: CredentialAction['kind'];
}

type Decided = Decision<CredentialStepEvent, CredentialStepRefusal>;

/**
 * The decider of one BMC's step. Every command the engine issues is checked against what the step would do now: a
 * login with another credential, a change that is not due, a second answer to one change are refused, so neither a
 * bug in an effector nor a stale engine can spend a login or send a change the rules do not allow.
 */
export function credentialStepDecider(context: CredentialStepContext): Decider<CredentialStepCommand, CredentialStepEvent, CredentialStepState, CredentialStepRefusal> {
  return {
    initialState: initialCredentialStep,
    evolve: (state, event, placement) => evolveCredentialStep(state, { ...(event as EventShape), actor: placement.actor, recordedAt: placement.recordedAt }),
    decide: (command, state) => decideCredentialStep(command, state, context),
  };
}

export function decideCredentialStep(command: CredentialStepCommand, state: CredentialStepState, context: CredentialStepContext): Decided {
  const { rotationId, nodeId } = context;
  const notNow = (why: string, next: CredentialAction['kind']): Decided => refuse({ code: 'CREDENTIAL_STEP_NOT_NOW', message: why, next });
  switch (command.kind) {
    case 'start':
      if (state.phase !== 'new') return notNow('the step has started', 'done');
      return record({ type: 'CredentialStepStarted', data: command.data });
    case 'record-login': {
      if (!state.pending || !sameCredential(state.pending, command.credential)) return notNow('no login with this credential is awaiting its answer', 'wait');
      const probed: CredentialStepEvent = {
        type: 'BmcLoginProbed',
        data: { nodeId, credentialRef: command.credential.credentialRef, version: command.credential.version, purpose: command.purpose, result: command.result, ...(command.code ? { code: command.code.slice(0, 60) } : {}), ...(command.accountPath ? { accountPath: command.accountPath.slice(0, 500) } : {}) },
      };
      // The new version accepted settles the step in the same append.
      if (command.result === 'accepted' && state.to && sameCredential(command.credential, state.to) && state.key !== undefined) {
        return record(probed, changedEvent(state, context));
      }
      return record(probed, ...chained(state, [probed], command.now, context));
    }
    case 'record-change': {
      if (state.key !== command.key || state.answer !== 'none') return notNow(`the change ${command.key} is not awaiting an answer`, 'wait');
      const { answer } = command;
      const answered: CredentialStepEvent = answer.accepted
        ? { type: 'BmcPasswordChangeAccepted', data: { idempotencyKey: command.key, httpStatus: answer.httpStatus } }
        : {
            type: 'BmcPasswordChangeFailed',
            data: { idempotencyKey: command.key, reason: answer.reason, outcomeKnown: answer.outcomeKnown, ...(answer.status !== undefined ? { status: answer.status } : {}), ...(answer.messageIds?.length ? { messageIds: answer.messageIds.slice(0, 20) } : {}), message: answer.message.slice(0, 2000) },
          };
      return record(answered, ...chained(state, [answered], command.now, context));
    }
    default:
      break;
  }
  // The rest is what the step would do now, or nothing.
  const { action, due } = nextCredentialAction(state, command.now, context);
  if (due > command.now) return notNow(`not before ${new Date(due).toISOString()}`, action.kind);
  switch (command.kind) {
    case 'attempt-login':
      if (action.kind !== 'login' || !sameCredential(action.credential, command.credential) || action.purpose !== command.purpose) return notNow(`the step does not log in with ${command.credential.version} now`, action.kind);
      return record({ type: 'BmcLoginAttempted', data: { nodeId, credentialRef: command.credential.credentialRef, version: command.credential.version, purpose: command.purpose } });
    case 'request-change':
      if (action.kind !== 'change' || action.attempt !== command.attempt) return notNow(`no change attempt ${command.attempt} is due`, action.kind);
      return record({
        type: 'BmcPasswordChangeRequested',
        data: { rotationId, nodeId, idempotencyKey: action.key, attempt: action.attempt, fromRef: action.from.credentialRef, fromVersion: action.from.version, toVersion: action.to.version, accountPath: action.accountPath, via: command.via, at: command.now },
      });
    case 'changed':
      if (action.kind !== 'changed') return notNow('the new version is not proven', action.kind);
      return record(changedEvent(state, context));
    case 'hold':
      if (action.kind !== 'hold') return notNow('the step is not to be held now', action.kind);
      return record({ type: 'CredentialStepHeld', data: { rotationId, nodeId, credentialRef: action.inForce?.credentialRef ?? state.to?.credentialRef ?? '', hold: action.hold, inForce: action.inForce?.version ?? null, reason: action.reason.slice(0, 2000) } });
    default: {
      const unexpected: never = command;
      return unexpected;
    }
  }
}

/**
 * The intent that follows an answer at once, recorded in the same append (one write instead of two): the login or the
 * change the step would decide next, if it is due now. Recorded before the effect either way.
 */
function chained(state: CredentialStepState, answered: readonly CredentialStepEvent[], now: number, context: CredentialStepContext): CredentialStepEvent[] {
  let next = state;
  for (const event of answered) next = evolveCredentialStep(next, { ...(event as EventShape), actor: { kind: 'saga', id: context.rotationId }, recordedAt: now });
  const { action, due } = nextCredentialAction(next, now, context);
  if (due > now) return [];
  const { rotationId, nodeId } = context;
  if (action.kind === 'login') return [{ type: 'BmcLoginAttempted', data: { nodeId, credentialRef: action.credential.credentialRef, version: action.credential.version, purpose: action.purpose } }];
  if (action.kind === 'change') {
    return [{ type: 'BmcPasswordChangeRequested', data: { rotationId, nodeId, idempotencyKey: action.key, attempt: action.attempt, fromRef: action.from.credentialRef, fromVersion: action.from.version, toVersion: action.to.version, accountPath: action.accountPath, via: 'redfish-account-service', at: now } }];
  }
  return [];
}

function changedEvent(state: CredentialStepState, context: CredentialStepContext): CredentialStepEvent {
  return { type: 'BmcPasswordChanged', data: { rotationId: context.rotationId, nodeId: context.nodeId, credentialRef: state.to!.credentialRef, version: state.to!.version, digest: state.toDigest ?? '00000000', idempotencyKey: state.key ?? '' } };
}
