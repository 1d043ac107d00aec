import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRotation, type RotationRunResult } from '../../bench/support/rotation-run.js';
import { backends, freshDatabase } from '../support/backends.js';

/**
 * The small version of `npm run bench:rotation`: 40 simulated BMCs with a lockout threshold of 3, every password
 * changed by one rotation while the poller polls them (liveness every 2 s, heavy reads every 10 s), the rotation engine
 * SIGKILLed 6 times at seeded moments and started again, two BMCs refusing the new password with their vendor's
 * password-policy error. Judged from the BMCs' side.
 */
describe('a credential rotation killed 6 times', () => {
  let result: RotationRunResult;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    const started = performance.now();
    result = await runRotation({
      connectionString: db.url,
      bmcs: 40,
      cap: 20,
      kills: 6,
      seed: 20260544,
      killAfterMs: [400, 1_400],
      fenceGraceMs: 1_000,
      livenessIntervalS: 2,
      heavyIntervalS: 10,
      pollerRequestTimeoutMs: 600,
      waveFractions: [0.4],
      bakeMs: 300,
      budgets: { canaryFailures: 2, waveFailureRatio: 0.5, cumulativeFailureRatio: 0.1 },
      faults: (ids) => [{ fault: 'password-policy', target: { bmc: [ids[3]!, ids[17]!] }, count: 5 }],
      timeoutMs: 120_000,
      log: (line) => process.stderr.write(`${((performance.now() - started) / 1000).toFixed(1)} s ${line}\n`),
    });
    process.stderr.write(`rotation kill test: ${JSON.stringify({ ...result, perBmc: undefined, steps: undefined, outcomesAfter: undefined })}\n`);
  }, 180_000);
  afterAll(async () => drop?.());

  it('the engine was killed 6 times and the rotation completed: every BMC rotated or kept with a typed refusal', () => {
    expect(result.kills).toBe(6);
    expect(result.status).toBe('completed');
    expect(result.rotated + result.held).toBe(result.bmcs);
    expect(result.rotated).toBe(result.bmcs - 2);
    expect(result.kept).toBe(2);
    for (const hold of result.holds) expect(hold.cause).toMatch(/password-policy/);
  });

  it('no lockout, at most one failed login per BMC, no password the store does not hold, no poller latch', () => {
    expect(result.lockouts).toBe(0);
    expect(result.max_failed_logins_per_bmc).toBeLessThanOrEqual(1);
    expect(result.unknown_password_bmcs).toBe(0);
    expect(result.poller_latches_from_rotation).toBe(0);
  });

  it('each change is recorded as an intent before it is sent, and sent at most once per intent', () => {
    for (const [nodeId, events] of result.steps) {
      const intents = events.filter((event) => event.type === 'BmcPasswordChangeRequested').map((event) => event.data['idempotencyKey']);
      expect(new Set(intents).size, nodeId).toBe(intents.length);
      // A settled BMC's stream ends in BmcPasswordChanged or a named hold; never a secret in it.
      const last = events[events.length - 1]!;
      expect(['BmcPasswordChanged', 'CredentialStepHeld'], nodeId).toContain(last.type);
      expect(JSON.stringify(events)).not.toMatch(/"password"/i);
    }
  });

  it('the policy refusal is typed and recorded with the vendor message, and the old version stays in force', () => {
    const refused = [...result.steps.values()].flatMap((events) => events.filter((event) => event.type === 'BmcPasswordChangeFailed'));
    expect(refused.some((event) => event.data['reason'] === 'password-policy' && event.data['outcomeKnown'] === true)).toBe(true);
    const held = [...result.steps.values()].flatMap((events) => events.filter((event) => event.type === 'CredentialStepHeld'));
    for (const event of held) expect(event.data['inForce']).not.toBeNull();
  });

  it('the old versions are retired in one operation once their BMCs confirmed the new one', () => {
    expect(result.versions_retired).toBe(true);
  });

  it('after the rotation the poller logs in to every BMC with the version in force: contacts, no auth failure', () => {
    const outcomes = [...result.outcomesAfter.values()].flat();
    expect(outcomes.length).toBeGreaterThan(result.bmcs);
    expect(outcomes.filter((outcome) => outcome.endsWith(':auth'))).toEqual([]);
  });
});

describe('a BMC reset to its factory password', () => {
  let result: RotationRunResult;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    result = await runRotation({
      connectionString: db.url,
      bmcs: 8,
      cap: 8,
      kills: 0,
      seed: 20260545,
      killAfterMs: [1_000, 1_000],
      fenceGraceMs: 1_200,
      livenessIntervalS: 2,
      heavyIntervalS: 30,
      pollerRequestTimeoutMs: 1_000,
      waveFractions: [1],
      bakeMs: 200,
      budgets: { canaryFailures: 8, waveFailureRatio: 1, cumulativeFailureRatio: 1 },
      factoryFallback: true,
      // bmc-00001 is a Dell iDRAC (the fleet's first profile): reset before the poller first logs in.
      faults: () => [{ fault: 'factory-reset', target: { bmc: 'bmc-00001' }, duration: '200ms' }],
      timeoutMs: 60_000,
    });
  }, 120_000);
  afterAll(async () => drop?.());

  it('is latched by the poller after one failed login, then brought back by the factory fallback, tried once, and rotated', () => {
    expect(result.rotated).toBe(result.bmcs);
    const events = result.steps.get('bmc-00001')!;
    const fallbacks = events.filter((event) => event.type === 'BmcLoginAttempted' && event.data['purpose'] === 'fallback');
    expect(fallbacks).toHaveLength(1);
    // The version in force (which the poller's latch holds) is not tried again: no preflight login with it.
    expect(events.filter((event) => event.type === 'BmcLoginAttempted' && event.data['purpose'] === 'preflight')).toHaveLength(0);
    expect(events.map((event) => event.type)).toContain('BmcPasswordChanged');
    expect(result.perBmc.get('bmc-00001')).toEqual({ failedLogins: 1, lockouts: 0 });
    expect(result.lockouts).toBe(0);
    expect(result.unknown_password_bmcs).toBe(0);
  });

  it('the latch is lifted by the new version: the poller logs in to it again', () => {
    expect(result.outcomesAfter.get('bmc-00001')?.some((outcome) => outcome === 'liveness:success' || outcome === 'liveness:not-modified')).toBe(true);
  });
});
