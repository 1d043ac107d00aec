import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { DriverError } from '../../src/drivers/index.js';
import { EventStore } from '../../src/ledger/index.js';
import { Poller, type Credential, type PollTarget, type PollWork, type Visitor, type VisitResult } from '../../src/poller/index.js';
import { useFreshStore } from '../support/fresh-store.js';
import { ManualClock } from '../support/manual-clock.js';
import { until } from './support/until.js';
import { buildApi, TokenTable } from '../../src/api/index.js';

/** A fake fleet: per node, a behaviour; counts visits and concurrent visits per node. Its visits take clock time. */
class ScriptedVisitor implements Visitor {
  visits = new Map<string, number>();
  concurrent = new Map<string, number>();
  peak = new Map<string, number>();
  logins: Array<{ nodeId: string; password: string }> = [];
  constructor(
    private readonly clock: ManualClock,
    private readonly behaviour: (nodeId: string, credential: Credential, works: readonly PollWork[]) => 'ok' | DriverError,
  ) {}
  async visit(target: PollTarget, credential: Credential, works: readonly PollWork[]): Promise<VisitResult> {
    this.visits.set(target.nodeId, (this.visits.get(target.nodeId) ?? 0) + 1);
    const now = (this.concurrent.get(target.nodeId) ?? 0) + 1;
    this.concurrent.set(target.nodeId, now);
    this.peak.set(target.nodeId, Math.max(this.peak.get(target.nodeId) ?? 0, now));
    this.logins.push({ nodeId: target.nodeId, password: credential.password });
    await this.clock.sleep(works.length > 1 || works[0] !== 'liveness' ? 120 : 5);
    this.concurrent.set(target.nodeId, (this.concurrent.get(target.nodeId) ?? 1) - 1);
    const verdict = this.behaviour(target.nodeId, credential, works);
    return verdict === 'ok' ? { ok: true, latencyMs: 5, observations: [] } : { ok: false, latencyMs: 5, observations: [], error: verdict };
  }
}

const target = (nodeId: string, intervalS = 0.2): PollTarget => ({ nodeId, site: 'dc1', rack: 'r1', baseUrl: `http://${nodeId}`, credentialRef: `cred-${nodeId}`, sessionLimit: 4, expectedIntervalS: intervalS });

/**
 * The poller runs on a manual clock (its `clock` and `timers`): a test's seconds of scheduling pass in milliseconds and
 * are the same on a busy machine as on a quiet one. Its ledger is real, so what the poller records is awaited in real
 * time (`until`).
 */
describe('the per-target poll scheduler', () => {
  const freshStore = useFreshStore();
  let clock = new ManualClock();
  const timed = () => ({ clock: clock.now, timers: clock });
  const elapse = (ms: number) => clock.advance(ms);
  const stop = (poller: Poller) => clock.settle(poller.stop());
  beforeEach(() => {
    clock = new ManualClock(Date.now());
  });

  it('a failing BMC receives less traffic than a healthy one, never more', async () => {
    const visitor = new ScriptedVisitor(clock, (nodeId) => (nodeId === 'sick' ? new DriverError('DRIVER_TIMEOUT', 'deadline passed', {}) : 'ok'));
    const poller = new Poller({ ...timed(), store: freshStore(), visitor, credentials: { get: () => ({ username: 'u', password: 'p', version: '1', endpoints: ['*'] }) }, plainHttpSites: ['dc1'], policy: { breakerThreshold: 3, maxBackoffFactor: 8, jitter: 0, intervals: { health: 0.3, inventory: 0.3, firmware: 0.3 } } });
    poller.addTarget(target('sick', 0.1));
    poller.addTarget(target('well', 0.1));
    poller.start();
    await elapse(3000);
    await stop(poller);
    const sick = visitor.visits.get('sick') ?? 0;
    const well = visitor.visits.get('well') ?? 0;
    expect(sick).toBeGreaterThan(3);
    expect(sick).toBeLessThan(well / 2);
  });

  it('a BMC never has more visits in flight than one check and one read, within its session limit', async () => {
    const visitor = new ScriptedVisitor(clock, () => 'ok');
    const poller = new Poller({ ...timed(), store: freshStore(), visitor, credentials: { get: () => ({ username: 'u', password: 'p', version: '1', endpoints: ['*'] }) }, plainHttpSites: ['dc1'], policy: { jitter: 0, intervals: { health: 0.05, inventory: 0.05, firmware: 0.05 } } });
    for (let i = 0; i < 20; i += 1) poller.addTarget({ ...target(`n${i}`, 0.05), sessionLimit: i % 2 === 0 ? 1 : 4 });
    poller.start();
    await elapse(2500);
    await stop(poller);
    for (let i = 0; i < 20; i += 1) expect(visitor.peak.get(`n${i}`), `n${i}`).toBeLessThanOrEqual(i % 2 === 0 ? 1 : 2);
  });

  it('an SNMP device gets one visit at a time (its check waits for its walk) unless its registration gives a session limit', async () => {
    const visitor = new ScriptedVisitor(clock, () => 'ok');
    const poller = new Poller({ ...timed(), store: freshStore(), visitor, credentials: { get: () => ({ username: '', password: 'community', version: '1', endpoints: ['*'] }) }, policy: { jitter: 0, intervals: { health: 0.05, inventory: 0.05, firmware: 0.05 } } });
    for (let i = 0; i < 6; i += 1) {
      const { sessionLimit: _none, ...snmp } = target(`pdu${i}`, 0.05);
      poller.addTarget({ ...snmp, protocol: 'snmp', baseUrl: `snmp://pdu${i}:161`, ...(i % 2 === 1 ? { sessionLimit: 2 } : {}) });
    }
    poller.start();
    await elapse(2500);
    await stop(poller);
    for (let i = 0; i < 6; i += 1) {
      expect(visitor.visits.get(`pdu${i}`), `pdu${i}`).toBeGreaterThan(5);
      expect(visitor.peak.get(`pdu${i}`), `pdu${i}`).toBeLessThanOrEqual(i % 2 === 1 ? 2 : 1);
    }
    // Where two are allowed, a check does overlap a walk: the one-at-a-time above is the SNMP default, not chance.
    expect([1, 3, 5].some((i) => visitor.peak.get(`pdu${i}`) === 2)).toBe(true);
  });

  it('an authentication failure latches the BMC: no further login until the credential changes, and the latch is recorded', async () => {
    let version = '1';
    const nodeId = `latch-${randomUUID().slice(0, 6)}`;
    const visitor = new ScriptedVisitor(clock, (_, credential) => (credential.version === '1' ? new DriverError('DRIVER_AUTH', 'credentials refused', { status: 401 }) : 'ok'));
    const poller = new Poller({ ...timed(), store: freshStore(), visitor, credentials: { get: () => ({ username: 'u', password: `secret-${version}`, version, endpoints: ['*'] }) }, plainHttpSites: ['dc1'], policy: { jitter: 0 } });
    poller.addTarget(target(nodeId, 0.1));
    poller.start();
    await elapse(1500);
    expect(visitor.logins.filter((l) => l.nodeId === nodeId)).toHaveLength(1);
    expect(poller.isLatched(nodeId)).toBe(true);
    await until(async () => (await freshStore().streamVersion(`node-${nodeId}`)) !== null, 10_000, 'the latch recorded');
    const events = await freshStore().readStream(`node-${nodeId}`);
    expect(events.map((e) => e.type)).toEqual(['LockoutLatched']);
    expect(JSON.stringify(events[0]!.data)).not.toContain('secret');
    version = '2';
    await elapse(600);
    await stop(poller);
    expect(poller.isLatched(nodeId)).toBe(false);
    expect(visitor.logins.filter((l) => l.nodeId === nodeId).length).toBeGreaterThan(1);
  });

  it('per-BMC health is exported in a bounded form: failure buckets, counts and at most five named targets, never one series per BMC', async () => {
    const visitor = new ScriptedVisitor(clock, (nodeId) => (nodeId.startsWith('sick') ? new DriverError('DRIVER_TIMEOUT', 'deadline passed', {}) : nodeId.startsWith('full') ? new DriverError('DRIVER_SESSION_LIMIT', 'RAC0218', {}) : 'ok'));
    const poller = new Poller({ ...timed(), store: freshStore(), visitor, credentials: { get: () => ({ username: 'u', password: 'p', version: '1', endpoints: ['*'] }) }, plainHttpSites: ['dc1'], policy: { jitter: 0, breakerThreshold: 100 } });
    for (let index = 0; index < 12; index += 1) poller.addTarget(target(`sick-${index}`, 0.05 + index * 0.02));
    for (let index = 0; index < 3; index += 1) poller.addTarget(target(`well-${index}`, 0.05));
    poller.addTarget(target('full-0', 0.05));
    // Plain http on a site that does not allow it: the credential is not sent.
    poller.addTarget({ ...target('refused', 0.05), site: 'dc2' });
    poller.start();
    await elapse(1500);
    const stats = poller.stats();
    await stop(poller);
    expect(Object.values(stats.failureBuckets).reduce((a, b) => a + b, 0)).toBe(stats.targets);
    expect(stats.failureBuckets['0']).toBeGreaterThanOrEqual(3);
    expect(stats.worstTargets.length).toBe(5);
    expect(stats.worstTargets.every((worst) => worst.nodeId.startsWith('sick'))).toBe(true);
    const failures = stats.worstTargets.map((worst) => worst.consecutiveFailures);
    expect(failures).toEqual([...failures].sort((a, b) => b - a));
    // The shortest interval fails most often.
    expect(stats.worstTargets[0]!.nodeId).toBe('sick-0');
    expect(stats.sessionLimitedTargets).toBe(1);
    expect(stats.credentialRefusedTargets).toBe(1);

    // Over /metrics: the same, in a fixed number of series.
    const app = await buildApi({ store: freshStore(), poller, tokens: new TokenTable([]) });
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    await app.close();
    const series = (name: string) => text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
    expect(series('fleet_ledger_poller_targets_by_consecutive_failures')).toHaveLength(5);
    expect(series('fleet_ledger_poller_worst_target_consecutive_failures')).toHaveLength(5);
    expect(series('fleet_ledger_poller_credential_refused_targets')).toEqual(['fleet_ledger_poller_credential_refused_targets 1']);
    expect(series('fleet_ledger_poller_session_limited_targets')).toEqual(['fleet_ledger_poller_session_limited_targets 1']);
  });

  it('a credential goes only to the addresses it is bound to, over https unless the site allows http: a node re-registered elsewhere is sent nothing', async () => {
    const visitor = new ScriptedVisitor(clock, () => 'ok');
    const logs: Array<Record<string, unknown> | undefined> = [];
    const poller = new Poller({
      ...timed(),
      store: freshStore(),
      visitor,
      credentials: { get: () => ({ username: 'u', password: 'bound-secret', version: '1', endpoints: ['10.20.0.0/16'] }) },
      plainHttpSites: ['lab'],
      log: (_message, fields) => logs.push(fields),
      policy: { jitter: 0 },
    });
    const bound = { ...target('bound', 0.1), baseUrl: 'https://10.20.1.5' };
    poller.addTarget(bound);
    poller.addTarget({ ...target('plain', 0.1), baseUrl: 'http://10.20.1.6' });
    poller.addTarget({ ...target('lab', 0.1), site: 'lab', baseUrl: 'http://10.20.1.7' });
    poller.start();
    await elapse(400);
    const loginsAt = (nodeId: string) => visitor.logins.filter((login) => login.nodeId === nodeId).length;
    expect(loginsAt('bound')).toBeGreaterThan(0);
    expect(loginsAt('lab')).toBeGreaterThan(0);
    expect(loginsAt('plain')).toBe(0);
    // Re-registered at a host outside the credential's endpoints (an attacker's, say): not one more login.
    poller.addTarget({ ...bound, baseUrl: 'https://10.20.1.5.attacker.example' });
    const before = loginsAt('bound');
    await elapse(600);
    expect(loginsAt('bound')).toBeLessThanOrEqual(before + 1); // a visit already in flight may finish
    expect(poller.stats().outcomes.latched).toBeGreaterThan(0);
    expect(logs.map((fields) => fields?.reason)).toEqual(
      expect.arrayContaining([expect.stringContaining('https is required'), expect.stringContaining('matches none of the endpoints')]),
    );
    expect(JSON.stringify(logs)).not.toContain('bound-secret');
    await stop(poller);
  });

  it('a lockout latch taken while the ledger is unreachable is stored once it is back (a latch only in memory would vanish at restart)', async () => {
    const nodeId = `latch-${randomUUID().slice(0, 6)}`;
    let ledgerDown = true;
    const flaky = new Proxy(freshStore(), {
      get(target, property, receiver) {
        if (property === 'append') {
          return (stream: string, events: Parameters<EventStore['append']>[1]) =>
            ledgerDown && stream === `node-${nodeId}` ? Promise.reject(new Error('ECONNREFUSED')) : target.append(stream, events);
        }
        return Reflect.get(target, property, receiver);
      },
    });
    const visitor = new ScriptedVisitor(clock, () => new DriverError('DRIVER_AUTH', 'credentials refused', { status: 401 }));
    const poller = new Poller({ ...timed(), store: flaky, visitor, credentials: { get: () => ({ username: 'u', password: 'p', version: '1', endpoints: ['*'] }) }, plainHttpSites: ['dc1'], policy: { jitter: 0, flushIntervalMs: 200 } });
    poller.addTarget(target(nodeId, 0.1));
    poller.start();
    await elapse(700);
    expect(poller.isLatched(nodeId)).toBe(true);
    expect(poller.stats().unrecordedLatches).toBe(1);
    expect(await freshStore().streamVersion(`node-${nodeId}`)).toBeNull();
    ledgerDown = false;
    await elapse(700);
    // The flush that stores it ran on the clock; its append is real I/O.
    await until(async () => (await elapse(200), poller.stats().unrecordedLatches === 0), 10_000, 'the latch stored');
    await stop(poller);
    expect((await freshStore().readStream(`node-${nodeId}`)).map((e) => e.type)).toEqual(['LockoutLatched']);
    expect(visitor.logins.filter((l) => l.nodeId === nodeId)).toHaveLength(1);
  });

  it('an operator clearing the latch allows logins again', async () => {
    const nodeId = `clear-${randomUUID().slice(0, 6)}`;
    let refuse = true;
    const visitor = new ScriptedVisitor(clock, () => (refuse ? new DriverError('DRIVER_PASSWORD_CHANGE_REQUIRED', 'change it', { status: 403 }) : 'ok'));
    const poller = new Poller({ ...timed(), store: freshStore(), visitor, credentials: { get: () => ({ username: 'u', password: 'p', version: '1', endpoints: ['*'] }) }, plainHttpSites: ['dc1'] });
    const abort = new AbortController();
    const head = (await freshStore().head()).position;
    const following = poller.followIntents(abort.signal, head + 1);
    poller.start();
    // The intents arrive through the ledger's feed, in real time; the poller acts on them on its clock.
    await freshStore().append(`node-${nodeId}`, [{ type: 'NodeRegistered', data: { nodeId, site: 'dc1', rack: 'r1', bmc: { protocol: 'redfish', address: 'http://bmc', credentialRef: 'c' }, expectedIntervalS: 1 }, actor: { kind: 'operator', id: 'alice' } }]);
    await until(() => poller.stats().targets === 1, 10_000, 'the node registered');
    await elapse(2500);
    expect(poller.isLatched(nodeId)).toBe(true);
    const loginsWhileLatched = visitor.logins.filter((login) => login.nodeId === nodeId).length;
    await elapse(2500);
    expect(visitor.logins.filter((login) => login.nodeId === nodeId)).toHaveLength(loginsWhileLatched);
    refuse = false;
    await freshStore().append(`node-${nodeId}`, [{ type: 'LockoutLatchCleared', data: { nodeId, reason: 'password reset on the BMC' }, actor: { kind: 'operator', id: 'alice' } }]);
    await until(() => !poller.isLatched(nodeId), 10_000, 'the latch cleared');
    await elapse(1500);
    expect(poller.isLatched(nodeId)).toBe(false);
    expect(visitor.logins.filter((login) => login.nodeId === nodeId).length).toBeGreaterThan(loginsWhileLatched);
    await freshStore().append(`node-${nodeId}`, [{ type: 'NodeDecommissioned', data: { nodeId, reason: 'returned to vendor' }, actor: { kind: 'operator', id: 'alice' } }]);
    await until(() => poller.stats().targets === 0, 10_000, 'the node decommissioned');
    await elapse(500);
    const visits = visitor.visits.get(nodeId) ?? 0;
    await elapse(1500);
    expect(visitor.visits.get(nodeId)).toBe(visits);
    abort.abort();
    await following;
    await stop(poller);
  });

  it('every outcome is recorded in one columnar batch per site', async () => {
    const visitor = new ScriptedVisitor(clock, (nodeId) => (nodeId.endsWith('x') ? new DriverError('DRIVER_SESSION_LIMIT', 'RAC0218', { status: 503 }) : 'ok'));
    const site = `site${randomUUID().slice(0, 6)}`;
    const poller = new Poller({ ...timed(), store: freshStore(), visitor, credentials: { get: () => ({ username: 'u', password: 'p', version: '1', endpoints: ['*'] }) }, plainHttpSites: ['*'], policy: { flushIntervalMs: 100000 } });
    poller.addTarget({ ...target('a-ok', 10), site });
    poller.addTarget({ ...target('b-x', 10), site });
    poller.start();
    await elapse(300);
    await stop(poller);
    const [batch] = await freshStore().readStream(`polls-${site}`);
    expect(batch!.data).toMatchObject({ site, nodeIds: expect.arrayContaining(['a-ok', 'b-x']) });
    const data = batch!.data as { nodeIds: string[]; outcomes: string[] };
    expect(data.outcomes[data.nodeIds.indexOf('b-x')]).toBe('session-limit');
    expect(data.outcomes[data.nodeIds.indexOf('a-ok')]).toBe('success');
  });
});
