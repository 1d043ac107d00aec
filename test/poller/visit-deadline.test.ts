/**
 * A heavy visit has a total deadline, not only one per request: a BMC slow enough to answer every request just
 * within its own deadline would otherwise hold a visit slot (and a session) for as long as its tree is long.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { RedfishVisitor } from '../../src/poller/index.js';
import { parseScenario, startSimulator, type Simulator } from '../../src/sim/index.js';

describe('the total deadline of a heavy visit', () => {
  let sim: Simulator | undefined;
  afterAll(async () => sim?.close());

  it('a slow BMC read in full is cut at the visit deadline as a timeout, and its session is logged out', async () => {
    sim = await startSimulator({ scenario: parseScenario({ name: 'slow', fleet: { bmcs: 1, mix: [{ fixture: 'dell' }] }, behaviour: { latencyScale: 1 } }), clockFactor: 1 });
    const bmc = sim.bmcs[0]!;
    sim.injectFault({ kind: 'slow', target: { bmc: bmc.id }, factor: 20, duration: '5m' });
    const target = { nodeId: bmc.id, site: bmc.site, rack: bmc.rack, baseUrl: bmc.baseUrl, credentialRef: 'c', expectedIntervalS: 60 };
    const credential = { username: bmc.username, password: bmc.password, version: '1', endpoints: [new URL(bmc.baseUrl).origin] };
    const visitor = new RedfishVisitor();
    const result = await visitor.visit(target, credential, ['health', 'inventory', 'firmware'], { requestTimeoutMs: 30_000, firmwareTimeoutMs: 30_000, visitDeadlineMs: 1_500, sessionLimit: 2 });
    expect(result.ok).toBe(false);
    expect(result.error).toMatchObject({ code: 'DRIVER_TIMEOUT', message: expect.stringContaining('total deadline') });
    // Cut near the deadline (plus the logout, which still goes out), not after the many seconds the whole tree takes.
    expect(result.latencyMs).toBeLessThan(1_500 + 3_000);
    expect(sim.bmcStats(bmc.id)!.sessionsNow).toBe(0);
  }, 60_000);
});
