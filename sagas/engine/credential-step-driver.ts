/**
 * Drives one BMC's rotation step until it settles: the only code that logs in to a BMC or changes its password for a
 * rotation. Every effect is asked of the step's decider first (`credentialStepDecider`), recorded, and only then done:
 * a login is recorded as tried before it is sent, a change's intent before the PATCH; an answer is recorded after it.
 * An append refused (another writer, a lost answer) reloads the step from the log and decides again, so nothing is
 * done twice on a guess.
 *
 * Secrets come from the credential store (`VersionedCredentialStore`) by reference and version, go only to an address
 * the credential is bound to, and never reach the log: a BMC's error text is recorded with every secret of the step
 * replaced by `[redacted]`.
 */
import type { ProposedEvent, SagaLeaseStamp } from '../../events/index.js';
import type { VersionedCredentialStore } from '../../src/credentials/index.js';
import { DriverError, RedfishAccountService, type DriverErrorDetails } from '../../src/drivers/index.js';
import type { EventStore } from '../../src/ledger/index.js';
import { credentialRefusal } from '../../src/poller/index.js';
import { credentialStepDecider, nextCredentialAction, type CredentialStepCommand, type CredentialStepContext, type LoginPurpose } from '../credential-rotation/credential-step-decide.js';
import { credentialStepStream, evolveCredentialStep, initialCredentialStep, type CredentialId, type CredentialStepState } from '../credential-rotation/credential-step-evolve.js';
import type { RotationTarget } from '../credential-rotation/rotation-planner.js';
import type { CredentialStepEvent, PasswordRefusal } from '../../events/index.js';
import { nameUuid } from '../../src/ledger/index.js';

export interface CredentialStepDriverOptions {
  store: EventStore;
  credentials: VersionedCredentialStore;
  target: RotationTarget;
  context: CredentialStepContext;
  /** The new version and its digest (staged and recorded before the BMC was dispatched). */
  staged: { version: string; digest: string };
  slotId: string;
  requestTimeoutMs: number;
  /** Sites whose BMCs may be reached over plain http (the simulator). */
  plainHttpSites?: readonly string[];
  now: () => number;
  stopping: () => boolean;
  /** False once the rotation's lease is lost: nothing more is sent or appended. */
  owned: () => boolean;
  lease?: SagaLeaseStamp;
  get: () => CredentialStepState | undefined;
  set: (state: CredentialStepState) => void;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** A worker (re)starting waits a random moment up to this first: BMCs resumed together after a restart do not all log in at once. */
  startJitterMs?: number;
}

export async function loadCredentialStep(store: EventStore, rotationId: string, nodeId: string): Promise<CredentialStepState> {
  let state = initialCredentialStep();
  for (const event of await store.readStreamToEnd(credentialStepStream(rotationId, nodeId))) state = evolveCredentialStep(state, { type: event.type, data: event.data, actor: event.actor, recordedAt: event.recordedAt.getTime() });
  return state;
}

/** What a refused or unanswered change means, typed from the driver's error (never guessing that it was applied). */
export function classifyChangeError(error: DriverError): { reason: PasswordRefusal; outcomeKnown: boolean } {
  const status = error.details.status;
  const text = [error.message, ...(error.details.messages ?? []).flatMap((message) => [message.messageId ?? '', message.message ?? ''])].join('\n');
  if (/\block(ed)?\b|lockout|locked out/i.test(text) && (status === 401 || status === 403 || error.code === 'DRIVER_AUTH')) return { reason: 'account-locked', outcomeKnown: true };
  if (status === 401 || (error.code === 'DRIVER_AUTH' && status !== 403)) return { reason: 'unauthorized', outcomeKnown: true };
  switch (error.code) {
    case 'DRIVER_TIMEOUT':
    case 'DRIVER_UNREACHABLE':
    case 'DRIVER_PROTOCOL':
    case 'DRIVER_REDIRECT_REFUSED':
      return { reason: 'unknown-outcome', outcomeKnown: false };
    case 'DRIVER_NOT_FOUND':
    case 'DRIVER_UNSUPPORTED':
      return { reason: 'no-account-service', outcomeKnown: true };
    case 'DRIVER_SESSION_LIMIT':
    case 'DRIVER_RATE_LIMITED':
    case 'DRIVER_CONFLICT':
      return { reason: 'busy', outcomeKnown: true };
    case 'DRIVER_BMC_UNAVAILABLE':
      // 503 (busy, restarting) is answered before the change is made; a 500 might come after it.
      return status === 503 ? { reason: 'busy', outcomeKnown: true } : { reason: 'unknown-outcome', outcomeKnown: false };
    default:
      break;
  }
  if (status === 405 || status === 501) return { reason: 'no-account-service', outcomeKnown: true };
  if (status === 400 && /password|PropertyValue|policy|complex|length|RAC1212|PropertyValueBadParam/i.test(text)) return { reason: 'password-policy', outcomeKnown: true };
  if (status !== undefined && status >= 400 && status < 500) return { reason: 'rejected', outcomeKnown: true };
  return { reason: 'unknown-outcome', outcomeKnown: false };
}

function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 3) out = out.split(secret).join('[redacted]');
  return out;
}

function messageIdsOf(details: DriverErrorDetails): string[] {
  return (details.messages ?? []).flatMap((message) => (message.messageId ? [message.messageId.slice(0, 200)] : [])).slice(0, 20);
}

export async function driveCredentialStep(options: CredentialStepDriverOptions): Promise<void> {
  const { store, target, context, credentials } = options;
  const decider = credentialStepDecider(context);
  const stream = credentialStepStream(context.rotationId, target.nodeId);
  const actor = { kind: 'saga' as const, id: `rotation:${context.rotationId}`, ...(options.lease ? { lease: options.lease } : {}) };
  const accounts = new RedfishAccountService({ baseUrl: target.address, requestTimeoutMs: options.requestTimeoutMs, guard: options.owned });
  const plainHttp = options.plainHttpSites?.some((site) => site === '*' || site === target.site) ?? false;
  const secretOf = (credential: CredentialId) => {
    const stored = credentials.getVersion(credential.credentialRef, credential.version);
    if (!stored) return undefined;
    // A secret goes only where it is bound (and over https unless the site allows http), as the poller's do.
    return credentialRefusal(stored, target.address, plainHttp) === null ? stored : undefined;
  };
  const sleep = async (ms: number): Promise<void> => {
    const end = Date.now() + ms;
    while (Date.now() < end && !options.stopping()) await new Promise((resolve) => setTimeout(resolve, Math.min(200, end - Date.now())));
  };

  /** Decides `command` on the step's state and appends what was decided; the events appended, or undefined (refused). */
  const issue = async (command: CredentialStepCommand, eventId?: string): Promise<CredentialStepEvent[] | undefined> => {
    const state = options.get() ?? initialCredentialStep();
    const decision = decider.decide(command, state);
    if (decision.kind !== 'record') {
      if (decision.kind === 'refused') options.log?.('credential step: a command was refused by its decider', { nodeId: target.nodeId, command: command.kind, refusal: decision.refusal.message });
      return undefined;
    }
    if (!options.owned()) throw new Error(`step ${stream} is not held by this process (rotation lease lost)`);
    const events: ProposedEvent[] = decision.events.map((event, index) => ({ type: event.type, data: event.data, actor, ...(eventId && index === 0 ? { eventId } : {}) }));
    const result = await store.append(stream, events, { expectedVersion: state.version === 0 ? 'no_stream' : state.version });
    if (result.idempotentReplay) {
      options.set(await loadCredentialStep(store, context.rotationId, target.nodeId));
      return undefined;
    }
    let next = state;
    const at = options.now();
    for (const event of decision.events) next = evolveCredentialStep(next, { type: event.type, data: event.data, actor, recordedAt: at });
    options.set(next);
    return [...decision.events];
  };

  type Answer = Extract<CredentialStepCommand, { kind: 'record-login' } | { kind: 'record-change' }>;
  /** One login, recorded as tried already; its answer to record, or undefined when nothing more may be done here. */
  const login = async (credential: CredentialId, purpose: LoginPurpose): Promise<Answer | undefined> => {
    const secret = secretOf(credential);
    if (!secret) {
      options.log?.('credential step: the store holds no usable secret for a login it recorded; the BMC stays fenced until settled', { nodeId: target.nodeId, credentialRef: credential.credentialRef, version: credential.version });
      return undefined;
    }
    let result: 'accepted' | 'refused' | 'unreachable';
    let code: string | undefined;
    let accountPath: string | undefined;
    try {
      if (purpose === 'preflight' || purpose === 'fallback') accountPath = await accounts.findAccount(secret);
      else await accounts.login(secret);
      result = 'accepted';
    } catch (error) {
      if (!(error instanceof DriverError)) throw error;
      if (error.code === 'DRIVER_FENCED') return undefined; // the lease ended before it was sent; the next owner settles it
      code = error.code;
      // The credential is right but must be changed: the BMC took it (a factory account often answers so). An account
      // service that is not there (404) or names no such user also took the credential to say so.
      if (error.code === 'DRIVER_PASSWORD_CHANGE_REQUIRED' || error.code === 'DRIVER_NOT_FOUND' || error.code === 'DRIVER_UNSUPPORTED') result = 'accepted';
      else result = error.code === 'DRIVER_AUTH' && error.details.status !== 403 ? 'refused' : 'unreachable';
    }
    return { kind: 'record-login', now: options.now(), credential, purpose, result, ...(code ? { code } : {}), ...(accountPath ? { accountPath } : {}) };
  };
  /** One change, its intent recorded already; its answer to record. */
  const change = async (key: string, fromId: CredentialId, toId: CredentialId, accountPath: string): Promise<Answer | undefined> => {
    const from = secretOf(fromId);
    const to = secretOf(toId);
    if (!from || !to) {
      options.log?.('credential step: the store holds no usable secret for the change; not sent', { nodeId: target.nodeId });
      return undefined;
    }
    try {
      const { status } = await accounts.changePassword(from, accountPath, to.password);
      return { kind: 'record-change', now: options.now(), key, answer: { accepted: true, httpStatus: status } };
    } catch (error) {
      if (!(error instanceof DriverError)) throw error;
      if (error.code === 'DRIVER_FENCED') return undefined; // not sent: the next owner finds the intent and settles it by logins
      const { reason, outcomeKnown } = classifyChangeError(error);
      const messageIds = messageIdsOf(error.details);
      const words = [error.message, ...(error.details.messages ?? []).map((message) => message.message ?? '')].filter(Boolean).join(' | ');
      return { kind: 'record-change', now: options.now(), key, answer: { accepted: false, reason, outcomeKnown, ...(error.details.status !== undefined ? { status: error.details.status } : {}), ...(messageIds.length ? { messageIds } : {}), message: redact(words, [from.password, to.password]).slice(0, 2000) } };
    }
  };
  /**
   * Records an answer, and carries out the intent the decider recorded with it (the next login or the change, in the
   * same append); until an answer brings no intent, or nothing more may be done here.
   */
  const carryOut = async (first: Answer | undefined): Promise<boolean> => {
    let answer = first;
    while (answer && !options.stopping()) {
      const appended = await issue(answer);
      if (!appended) return false;
      const last = appended[appended.length - 1]!;
      if (appended.length < 2) return true;
      if (last.type === 'BmcLoginAttempted') answer = await login({ credentialRef: last.data.credentialRef, version: last.data.version }, last.data.purpose);
      else if (last.type === 'BmcPasswordChangeRequested') answer = await change(last.data.idempotencyKey, { credentialRef: last.data.fromRef, version: last.data.fromVersion }, { credentialRef: target.credentialRef, version: last.data.toVersion }, last.data.accountPath);
      else return true;
    }
    return answer !== undefined;
  };

  if (options.startJitterMs) await sleep(Math.random() * options.startJitterMs);
  try {
    await loop();
  } finally {
    await accounts.close();
  }

  async function loop(): Promise<void> {
  while (!options.stopping()) {
    const state = options.get();
    if (!state) return;
    const now = options.now();
    const { action, due } = nextCredentialAction(state, now, context);
    if (due > now) {
      await sleep(Math.min(due - now, 500));
      continue;
    }
    try {
      switch (action.kind) {
        case 'done':
          return;
        case 'wait':
          await sleep(200);
          break;
        case 'start': {
          const from = target.fromVersion ?? credentials.get(target.credentialRef)?.version;
          if (from === undefined) {
            options.log?.('credential step not started: the store holds no version of the reference', { nodeId: target.nodeId, credentialRef: target.credentialRef });
            return;
          }
          await issue(
            { kind: 'start', now, data: { rotationId: context.rotationId, nodeId: target.nodeId, credentialRef: target.credentialRef, fromVersion: from, toVersion: options.staged.version, toDigest: options.staged.digest, slotId: options.slotId } },
            nameUuid(`${stream}:started`),
          );
          break;
        }
        case 'login': {
          if (!secretOf(action.credential)) {
            // The store does not hold it (or may not send it here): no login, and the step cannot go on by itself.
            options.log?.('credential step: the store holds no usable secret for a login it needs; the BMC stays fenced until settled by hand', { nodeId: target.nodeId, credentialRef: action.credential.credentialRef, version: action.credential.version });
            return;
          }
          if (!(await issue({ kind: 'attempt-login', now, credential: action.credential, purpose: action.purpose }))) break;
          if (!(await carryOut(await login(action.credential, action.purpose)))) return;
          break;
        }
        case 'change': {
          if (!secretOf(action.from) || !secretOf(action.to)) {
            options.log?.('credential step: the store holds no usable secret for the change; not sent', { nodeId: target.nodeId });
            return;
          }
          if (!(await issue({ kind: 'request-change', now, attempt: action.attempt, via: 'redfish-account-service' }))) break;
          if (!(await carryOut(await change(action.key, action.from, action.to, action.accountPath)))) return;
          break;
        }
        case 'changed':
          await issue({ kind: 'changed', now });
          break;
        case 'hold':
          if (await issue({ kind: 'hold', now })) options.log?.('BMC held', { rotationId: context.rotationId, nodeId: target.nodeId, hold: action.hold, reason: action.reason });
          break;
        default: {
          const unexpected: never = action;
          throw new Error(`unknown credential step action ${JSON.stringify(unexpected)}`);
        }
      }
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'LEDGER_WRONG_EXPECTED_VERSION') {
        options.set(await loadCredentialStep(store, context.rotationId, target.nodeId));
        continue;
      }
      throw error;
    }
  }
  }
}
