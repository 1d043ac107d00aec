/**
 * The simulator's EventService: served only for the models whose real controllers advertise a stream, events for its
 * health faults, and the field's failure modes of push, each seen by a real SSE client over HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openEventStream, type EventStream, type PushedEventRecord } from '../../src/drivers/index.ts';
import { parseScenario, startSimulator, type SimBmcInfo, type Simulator } from '../../src/sim/index.ts';
import { get } from './sim-client.ts';

function scenario(fixture: string, bmcs = 1): ReturnType<typeof parseScenario> {
  return parseScenario({ name: 'events', fleet: { bmcs, mix: [{ fixture }] }, behaviour: { latencyScale: 0, resetDark: '2s' } });
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('simulated EventService', { timeout: 20_000 }, () => {
  let sim: Simulator | undefined;
  const streams: EventStream[] = [];
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await sim?.close();
    sim = undefined;
  });

  async function listen(bmc: SimBmcInfo, uri = '/redfish/v1/EventService/SSE'): Promise<PushedEventRecord[]> {
    const seen: PushedEventRecord[] = [];
    streams.push(await openEventStream({ baseUrl: bmc.baseUrl, uri, username: bmc.username, password: bmc.password, connectTimeoutMs: 5_000, onRecord: (record) => seen.push(record) }));
    return seen;
  }

  it('serves a stream only where the real controller advertises one, disabled where its capture says so', async () => {
    sim = await startSimulator({ scenario: parseScenario({ name: 'mix', fleet: { bmcs: 4, mix: [{ fixture: 'nvidia_gb200' }, { fixture: 'dell' }, { fixture: 'hpe' }, { fixture: 'dell_multi_dpu' }] }, behaviour: { latencyScale: 0 } }) });
    const byFixture = new Map(sim.bmcs.map((bmc) => [bmc.fixture, bmc]));
    const service = async (fixture: string): Promise<unknown> => (await get(byFixture.get(fixture)!, '/redfish/v1/EventService')).body;
    expect(await service('nvidia_gb200')).toMatchObject({ ServiceEnabled: true, ServerSentEventUri: '/redfish/v1/EventService/SSE' });
    expect(await service('dell_multi_dpu')).toMatchObject({ ServiceEnabled: true, ServerSentEventUri: '/redfish/v1/SSE' });
    expect(await service('dell')).toMatchObject({ ServiceEnabled: false });
    expect((await get(byFixture.get('hpe')!, '/redfish/v1/EventService')).status).toBe(404);
  });

  it('a health fault is announced on every stream, and the System shows it', async () => {
    sim = await startSimulator({ scenario: scenario('nvidia_gb200') });
    const bmc = sim.bmcs[0]!;
    const seen = await listen(bmc);
    sim.injectFault({ kind: 'health', target: { bmc: bmc.id }, health: 'Critical' });
    await until(() => seen.length === 1);
    expect(seen[0]).toMatchObject({ messageId: 'ResourceEvent.1.0.ResourceStatusChangedCritical', severity: 'Critical', heartbeat: false });
    expect((await get(bmc, seen[0]!.origin!)).body).toMatchObject({ Status: { Health: 'Critical' } });
  });

  it('an open stream holds one of the BMC\'s sessions and is listed as an SSE subscription', async () => {
    sim = await startSimulator({ scenario: scenario('nvidia_gb200') });
    const bmc = sim.bmcs[0]!;
    await listen(bmc);
    expect(sim.bmcStats(bmc.id)!.sessionsNow).toBe(1);
    expect((await get(bmc, '/redfish/v1/EventService/Subscriptions')).body).toMatchObject({ 'Members@odata.count': 1 });
  });

  it('push-silent: the stream is accepted and listed, and nothing is sent', async () => {
    sim = await startSimulator({ scenario: scenario('nvidia_gb200'), behaviour: { eventHeartbeatMs: 50 } });
    const bmc = sim.bmcs[0]!;
    sim.injectFault({ kind: 'push-silent', target: { bmc: bmc.id } });
    const seen = await listen(bmc);
    sim.injectFault({ kind: 'health', target: { bmc: bmc.id }, health: 'Warning' });
    // Absence is shown over a window six heartbeats long: a stream that sends would have sent by then.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen).toEqual([]);
    expect((await get(bmc, '/redfish/v1/EventService/Subscriptions')).body).toMatchObject({ 'Members@odata.count': 1 });
  });

  it('a reset forgets every subscription and leaves the stream open and mute', async () => {
    sim = await startSimulator({ scenario: scenario('nvidia_gb200'), clockFactor: 10 });
    const bmc = sim.bmcs[0]!;
    const seen = await listen(bmc);
    sim.injectFault({ kind: 'reset', target: { bmc: bmc.id } });
    await sim.clock.sleep(2_500);
    expect((await get(bmc, '/redfish/v1/EventService/Subscriptions')).body).toMatchObject({ 'Members@odata.count': 0 });
    const fresh = await listen(bmc);
    sim.injectFault({ kind: 'health', target: { bmc: bmc.id }, health: 'Critical' });
    await until(() => fresh.length === 1);
    expect(seen).toEqual([]);
  });

  it('push-stall: open streams stop for good (heartbeats too), still listed; a new stream is served', async () => {
    sim = await startSimulator({ scenario: scenario('nvidia_gb200'), behaviour: { eventHeartbeatMs: 30 } });
    const bmc = sim.bmcs[0]!;
    const stalled = await listen(bmc);
    await until(() => stalled.some((record) => record.heartbeat));
    sim.injectFault({ kind: 'push-stall', target: { bmc: bmc.id } });
    const count = stalled.length;
    const fresh = await listen(bmc);
    sim.injectFault({ kind: 'health', target: { bmc: bmc.id }, health: 'Critical' });
    await until(() => fresh.some((record) => !record.heartbeat));
    expect(stalled.length).toBe(count);
  });

  it('push-connection-cap: streams beyond the cap are refused with 503', async () => {
    sim = await startSimulator({ scenario: scenario('nvidia_gb200') });
    const bmc = sim.bmcs[0]!;
    sim.injectFault({ kind: 'push-connection-cap', target: { bmc: bmc.id }, count: 1 });
    await listen(bmc);
    await expect(listen(bmc)).rejects.toMatchObject({ code: 'DRIVER_BMC_UNAVAILABLE', details: { status: 503 } });
  });

  it('push-duplicate sends every event twice; push-reorder sends them in swapped pairs', async () => {
    sim = await startSimulator({ scenario: scenario('nvidia_gb200') });
    const bmc = sim.bmcs[0]!;
    const seen = await listen(bmc);
    sim.injectFault({ kind: 'push-duplicate', target: { bmc: bmc.id }, duration: '1h' });
    sim.injectFault({ kind: 'health', target: { bmc: bmc.id }, health: 'Warning' });
    await until(() => seen.length === 2);
    expect(seen.map((record) => record.eventId)).toEqual(['1', '1']);
    sim.clearFault(sim.faults()[0]!.id);
    sim.injectFault({ kind: 'push-reorder', target: { bmc: bmc.id }, duration: '1h' });
    sim.injectFault({ kind: 'health', target: { bmc: bmc.id }, health: 'Critical' });
    sim.injectFault({ kind: 'health', target: { bmc: bmc.id }, health: 'OK' });
    await until(() => seen.length === 4);
    expect(seen.slice(2).map((record) => record.eventId)).toEqual(['3', '2']);
  });
});
