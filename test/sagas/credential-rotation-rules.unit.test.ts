/**
 * The credential rotation's step, against a model BMC, under random interleavings of answers, lost answers, engine
 * kills at every write boundary (between an intent and its request, between a request and its answer's record,
 * between a login and its record), policy refusals, busy BMCs and unreachable ones. The three rules of issue 44:
 * - no BMC ever gets a second password change for one intent, nor a change for a new intent unless the previous one
 *   is proven not applied (a refusal, or a login with the old credential accepted after it);
 * - at most one failed login per BMC per rotation (when nothing but the rotation changes the BMC's password), and
 *   never as many as the lockout threshold whatever else changes it (factory resets, someone else's change);
 * - the poller never logs in with a version the BMC does not hold (it uses what the ledger says is in force, and
 *   nothing while the node is fenced).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyCredentialEvent, loginCredentialOf, type NodeCredential } from '../../src/credentials/index.js';
import {
  credentialKey,
  credentialStepDecider,
  nextCredentialAction,
  type CredentialId,
  type CredentialStepCommand,
  type CredentialStepContext,
  type CredentialStepState,
} from '../../sagas/index.js';
import type { CredentialStepEvent, PasswordRefusal } from '../../events/index.js';

const REF = 'sim:n1';
const OLD: CredentialId = { credentialRef: REF, version: 'v1' };
const NEW: CredentialId = { credentialRef: REF, version: 'rot-1' };
const FACTORY: CredentialId = { credentialRef: 'factory:dell', version: 'f1' };

interface ModelOptions {
  /** Someone else may change the BMC's password at any moment (a factory reset, a hand change). */
  adversarial: boolean;
  /** The BMC was reset to its factory password before the rotation, and the poller latched on the old version. */
  reset: boolean;
  factoryAllowed: boolean;
  lockoutThreshold: number;
}

interface ModelRun {
  events: CredentialStepEvent[];
  /** Change requests the BMC received, per intent key. */
  patchesPerKey: Map<string, number>;
  /** Failed logins the BMC counted from the step (and the poller's latch, when the model starts latched). */
  failedLogins: number;
  /** The most failed logins in a row the BMC counted (it starts over at a login it takes): its lockout counts these. */
  maxInARow: number;
  pollerViolations: string[];
  intentViolations: string[];
  final: CredentialStepState;
}

/** Runs one rotation step against a model BMC, the choices drawn from `script`. */
function runModel(script: readonly number[], options: ModelOptions): ModelRun {
  let cursor = 0;
  const pick = (n: number): number => (script.length === 0 ? 0 : script[cursor++ % script.length]! % n);
  const context: CredentialStepContext = {
    rotationId: 'rot-1',
    nodeId: 'n1',
    fenceGraceMs: 1_000,
    lockoutThreshold: options.lockoutThreshold,
    retryBudget: 2,
    stepDeadlineMs: 20_000,
    latched: options.reset,
    factory: options.factoryAllowed ? FACTORY : undefined,
    retryBackoffMs: 500,
    unreachableRetryMs: 500,
  };
  const decider = credentialStepDecider(context);
  let state = decider.initialState();
  const events: CredentialStepEvent[] = [];
  let now = 1_000_000;
  // The BMC: what it holds (a credential key), what it counted.
  let bmc = credentialKey(options.reset ? FACTORY : OLD);
  let failedLogins = options.reset ? 1 : 0; // the poller's one latched login
  let inARow = failedLogins;
  let maxInARow = inARow;
  const failed = (): void => {
    failedLogins++;
    inARow++;
    maxInARow = Math.max(maxInARow, inARow);
  };
  const patchesPerKey = new Map<string, number>();
  const pollerViolations: string[] = [];
  const intentViolations: string[] = [];
  const nodes = new Map<string, NodeCredential>();
  let pollerLatchedOn: string | undefined = options.reset ? credentialKey(OLD) : undefined;

  const append = (decided: readonly CredentialStepEvent[]): void => {
    for (const event of decided) {
      state = decider.evolve(state, event, { position: events.length + 1, streamVersion: events.length + 1, recordedAt: now, actor: { kind: 'saga', id: 'model' } });
      events.push(event);
      applyCredentialEvent(nodes, event, () => REF);
    }
  };
  const issue = (command: CredentialStepCommand): boolean => {
    const decision = decider.decide(command, state);
    if (decision.kind !== 'record') return false;
    append(decision.events);
    return true;
  };
  const pollerCheck = (): void => {
    // The poller logs in with what the ledger says is in force, unless fenced or latched on exactly that.
    const login = loginCredentialOf(nodes.get('n1'), REF);
    if (login.kind === 'fenced') return;
    const used = credentialKey({ credentialRef: login.credentialRef, version: login.version ?? OLD.version });
    if (used === pollerLatchedOn) return;
    if (!options.adversarial && used !== bmc) pollerViolations.push(`poller would use ${used} while the BMC holds ${bmc} after ${events.map((e) => e.type).join(',')}`);
  };

  type Record = Extract<CredentialStepCommand, { kind: 'record-login' } | { kind: 'record-change' }>;
  /** One login, as the BMC answers it; undefined: the engine was killed before the answer was recorded. */
  const login = (credential: CredentialId, purpose: Extract<CredentialStepCommand, { kind: 'record-login' }>['purpose']): Record | undefined => {
    if (pick(9) === 0) return undefined; // killed before the request
    const unreachable = pick(10) === 0;
    const accepted = !unreachable && bmc === credentialKey(credential);
    if (!unreachable && !accepted) failed();
    if (accepted) inARow = 0;
    if (accepted && credentialKey(credential) === credentialKey(NEW)) pollerLatchedOn = undefined;
    if (pick(9) === 0) return undefined; // killed before the answer was recorded
    return { kind: 'record-login', now, credential, purpose, result: unreachable ? 'unreachable' : accepted ? 'accepted' : 'refused', ...(accepted ? { accountPath: '/redfish/v1/AccountService/Accounts/2' } : {}) };
  };
  /** One change, as the BMC answers it. */
  const change = (key: string, from: CredentialId, to: CredentialId): Record | undefined => {
    if (pick(9) === 0) return undefined; // killed between the intent and the request
    patchesPerKey.set(key, (patchesPerKey.get(key) ?? 0) + 1);
    let answer: Extract<CredentialStepCommand, { kind: 'record-change' }>['answer'];
    if (bmc !== credentialKey(from)) {
      failed();
      answer = { accepted: false, reason: 'unauthorized', outcomeKnown: true, status: 401, message: 'refused' };
    } else {
      inARow = 0;
      const roll = pick(8);
      const refusal: PasswordRefusal | undefined = roll === 0 ? 'password-policy' : roll === 1 ? 'busy' : undefined;
      if (refusal) answer = { accepted: false, reason: refusal, outcomeKnown: true, status: refusal === 'busy' ? 503 : 400, message: refusal };
      else {
        bmc = credentialKey(to);
        answer = pick(5) === 0 ? { accepted: false, reason: 'unknown-outcome', outcomeKnown: false, message: 'timeout' } : { accepted: true, httpStatus: 200 };
      }
    }
    if (pick(9) === 0) return undefined; // killed before the answer was recorded
    return { kind: 'record-change', now, key, answer };
  };
  /** The previous intent must be settled as not applied before a new one: a refusal, or `from` accepted after it. */
  const checkNewIntent = (): void => {
    const previousKey = state.key;
    if (previousKey !== undefined && !(state.answer === 'refused' || state.results[credentialKey(state.from!)] === 'accepted')) {
      intentViolations.push(`a change after ${previousKey} that was not proven not applied`);
    }
  };
  /** Records an answer, and performs the intent recorded with it (the decider chains the next login or change). */
  const effects = (first: Record | undefined): void => {
    let answer = first;
    while (answer) {
      const before = events.length;
      if (!issue(answer)) return;
      pollerCheck();
      const last = events[events.length - 1]!;
      if (events.length - before < 2) return;
      if (last.type === 'BmcLoginAttempted') answer = login({ credentialRef: last.data.credentialRef, version: last.data.version }, last.data.purpose);
      else if (last.type === 'BmcPasswordChangeRequested') {
        checkNewIntentChained(before);
        answer = change(last.data.idempotencyKey, { credentialRef: last.data.fromRef, version: last.data.fromVersion }, { credentialRef: REF, version: last.data.toVersion });
      } else return;
    }
  };
  /** For a chained intent: the state just before it was recorded must show the previous intent settled. */
  const checkNewIntentChained = (before: number): void => {
    let replay = decider.initialState();
    events.slice(0, events.length - 1).forEach((event, index) => {
      replay = decider.evolve(replay, event, { position: index + 1, streamVersion: index + 1, recordedAt: now, actor: { kind: 'saga', id: 'model' } });
    });
    void before;
    if (replay.key !== undefined && !(replay.answer === 'refused' || replay.results[credentialKey(replay.from!)] === 'accepted')) {
      intentViolations.push(`a chained change after ${replay.key} that was not proven not applied`);
    }
  };

  for (let steps = 0; steps < 2_000; steps++) {
    if (options.adversarial && pick(25) === 0) bmc = pick(2) === 0 ? credentialKey(FACTORY) : 'someone-else';
    now += 1 + pick(50);
    const { action, due } = nextCredentialAction(state, now, context);
    if (due > now) {
      now = due;
      continue;
    }
    switch (action.kind) {
      case 'done':
        pollerCheck();
        return { events, patchesPerKey, failedLogins, maxInARow, pollerViolations, intentViolations, final: state };
      case 'wait':
        now += 100;
        break;
      case 'start':
        issue({ kind: 'start', now, data: { rotationId: 'rot-1', nodeId: 'n1', credentialRef: REF, fromVersion: OLD.version, toVersion: NEW.version, toDigest: 'abcdef0123456789', slotId: 'rot-1:n1' } });
        break;
      case 'login': {
        if (!issue({ kind: 'attempt-login', now, credential: action.credential, purpose: action.purpose })) throw new Error('the decider refused its own login');
        effects(login(action.credential, action.purpose));
        break;
      }
      case 'change': {
        checkNewIntent();
        if (!issue({ kind: 'request-change', now, attempt: action.attempt, via: 'redfish-account-service' })) throw new Error('the decider refused its own change');
        effects(change(action.key, action.from, action.to));
        break;
      }
      case 'changed':
        issue({ kind: 'changed', now });
        break;
      case 'hold':
        issue({ kind: 'hold', now });
        break;
    }
    pollerCheck();
  }
  throw new Error(`the step did not end in 2,000 decisions: ${state.phase} ${JSON.stringify(nextCredentialAction(state, now, context))} after ${events.map((e) => e.type).slice(-12).join(',')}`);
}

const script = fc.array(fc.nat({ max: 1_000 }), { minLength: 1, maxLength: 120 });
const runs = { numRuns: Number(process.env['FLEET_LEDGER_PROPERTY_RUNS'] ?? 3_000) };

describe('credential rotation: one BMC, kill -9 anywhere (fast-check, a model BMC)', () => {
  const faithful: ModelOptions = { adversarial: false, reset: false, factoryAllowed: false, lockoutThreshold: 3 };

  it('no BMC gets a second password change for one intent, nor a new intent before the previous is proven not applied', () => {
    fc.assert(
      fc.property(script, fc.boolean(), (choices, adversarial) => {
        const run = runModel(choices, { ...faithful, adversarial, factoryAllowed: adversarial });
        for (const [key, count] of run.patchesPerKey) expect(count, key).toBeLessThanOrEqual(1);
        expect(run.intentViolations).toEqual([]);
      }),
      runs,
    );
  });

  it('at most one failed login per BMC per rotation; never as many in a row as the lockout threshold, even when others change the password', () => {
    fc.assert(
      fc.property(script, (choices) => {
        expect(runModel(choices, faithful).failedLogins).toBeLessThanOrEqual(1);
      }),
      runs,
    );
    fc.assert(
      fc.property(script, fc.boolean(), fc.integer({ min: 2, max: 5 }), (choices, factoryAllowed, lockoutThreshold) => {
        const run = runModel(choices, { adversarial: true, reset: false, factoryAllowed, lockoutThreshold });
        expect(run.maxInARow).toBeLessThan(lockoutThreshold);
      }),
      runs,
    );
  });

  it('the poller never uses a version the node does not hold (fenced while the change is unsettled)', () => {
    fc.assert(
      fc.property(script, (choices) => {
        expect(runModel(choices, faithful).pollerViolations).toEqual([]);
      }),
      runs,
    );
  });

  it('a BMC reset to its factory password, latched by the poller, comes back through the fallback, tried once, below the threshold', () => {
    fc.assert(
      fc.property(script, (choices) => {
        const run = runModel(choices, { adversarial: false, reset: true, factoryAllowed: true, lockoutThreshold: 3 });
        expect(run.maxInARow).toBeLessThan(3);
        expect(run.failedLogins).toBeLessThanOrEqual(2);
        expect(run.pollerViolations).toEqual([]);
        expect(run.events.filter((event) => event.type === 'BmcLoginAttempted' && event.data.purpose === 'fallback').length).toBeLessThanOrEqual(1);
      }),
      runs,
    );
  });

  it('without interruptions or refusals a rotation is: fence, one login with the old version, the change, one login with the new', () => {
    const run = runModel([7], faithful);
    expect(run.final.phase).toBe('rotated');
    expect(run.events.map((event) => event.type)).toEqual([
      'CredentialStepStarted',
      'BmcLoginAttempted',
      'BmcLoginProbed',
      'BmcPasswordChangeRequested',
      'BmcPasswordChangeAccepted',
      'BmcLoginAttempted',
      'BmcLoginProbed',
      'BmcPasswordChanged',
    ]);
    expect(run.failedLogins).toBe(0);
  });
});
