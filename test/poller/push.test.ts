/**
 * Push, checked by poll: a BMC's SSE stream brings its events to the ledger once each, an open stream with heartbeats
 * answers for its liveness checks, and every way a stream fails in the field is found by its audit (or its heartbeat)
 * and recorded as a push gap, the node polled again at once and its subscription re-created. Each test runs while the
 * poller records its outcomes (every 0.3 s) to the same ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isEventOf, type EventOf } from '../../events/index.js';
import { openEventStream, type EventStream } from '../../src/drivers/index.js';
import { startPushFleet, type PushFleet } from './support/push-fleet.js';
import { until } from './support/until.js';

type Gap = EventOf<'PushGapOpened'>['data'];

/** Liveness checks answered (changed or not) so far. */
function checksAnswered(fleet: PushFleet): number {
  const { outcomes } = fleet.poller.stats();
  return outcomes.success + outcomes['not-modified'];
}

describe('push, checked by poll', { timeout: 30_000 }, () => {
  let fleet: PushFleet | undefined;
  const others: EventStream[] = [];
  afterEach(async () => {
    for (const stream of others.splice(0)) stream.close();
    await fleet?.close();
    fleet = undefined;
  });

  async function gaps(): Promise<Gap[]> {
    return (await fleet!.events('PushGapOpened')).flatMap((event) => (isEventOf(event, 'PushGapOpened') ? [event.data] : []));
  }
  async function streamsOpened(): Promise<number> {
    return (await fleet!.events('PushStreamOpened')).length;
  }
  async function pushedEvents(): Promise<Array<EventOf<'RedfishEventObserved'>['data'] & { observedAt: string | undefined }>> {
    return (await fleet!.events('RedfishEventObserved')).flatMap((event) => (isEventOf(event, 'RedfishEventObserved') ? [{ ...event.data, observedAt: event.observedAt?.toISOString() }] : []));
  }

  it('a health change is recorded once, as pushed, and a stream with heartbeats answers for the liveness checks', async () => {
    fleet = await startPushFleet({ heartbeatMs: 100, policy: { auditIntervalS: 30 } });
    const { sim, bmc } = fleet;
    await until(async () => (await streamsOpened()) === 1, 10_000, 'a stream opened');
    // The first heavy reads (inventory, firmware, health) are done: what the BMC is asked from now on is the checks'.
    await until(async () => (await fleet!.events('FirmwareInventoryObserved')).length === 1 && (await fleet!.events('SelEntriesObserved')).length === 1 && fleet!.poller.stats().visitsInFlight === 0, 10_000, 'the first reads');
    const requestsBefore = sim.bmcStats(bmc.id)!.requests;
    sim.injectFault({ kind: 'health', target: { bmc: bmc.id }, health: 'Critical' });
    await until(async () => (await pushedEvents()).length === 1, 5_000, 'the event recorded');
    expect((await pushedEvents())[0]).toMatchObject({ origin: 'pushed', messageId: 'ResourceEvent.1.0.ResourceStatusChangedCritical', severity: 'Critical' });
    const outcomesBefore = checksAnswered(fleet);
    await until(() => (checksAnswered(fleet!)) >= outcomesBefore + 5, 5_000, 'five more checks answered');
    // Five checks answered by the stream's heartbeats: no request reached the BMC for them.
    expect(sim.bmcStats(bmc.id)!.requests).toBe(requestsBefore);
    expect(await gaps()).toEqual([]);
  });

  it('accepted but silent, nothing changing: the audit asks for a test event, none comes, a silent gap; the node is polled', async () => {
    fleet = await startPushFleet();
    const { sim, bmc } = fleet;
    sim.injectFault({ kind: 'push-silent', target: { bmc: bmc.id } });
    await until(async () => (await gaps()).some((gap) => gap.kind === 'silent'), 10_000, 'a silent gap');
    expect((await gaps())[0]).toMatchObject({ kind: 'silent', detail: expect.stringContaining('test event') });
    expect(fleet.poller.stats().push).toMatchObject({ streamsOpen: 0, gaps: { silent: 1 } });
    const checks = checksAnswered(fleet);
    const requests = sim.bmcStats(bmc.id)!.requests;
    await until(() => checksAnswered(fleet!) >= checks + 3, 5_000, 'three more checks');
    expect(sim.bmcStats(bmc.id)!.requests).toBeGreaterThanOrEqual(requests + 3);
    expect(await pushedEvents()).toEqual([]);
  });

  it('silent through a change: the audit finds the BMC changed while its stream said nothing, a silent gap since the last agreeing audit', async () => {
    fleet = await startPushFleet();
    const { sim, bmc } = fleet;
    await until(async () => (await streamsOpened()) === 1, 10_000, 'a stream opened');
    sim.injectFault({ kind: 'push-silent', target: { bmc: bmc.id } });
    const silencedAt = Date.now();
    sim.injectFault({ kind: 'health', target: { bmc: bmc.id }, health: 'Critical' });
    await until(async () => (await gaps()).some((gap) => gap.kind === 'silent'), 10_000, 'a silent gap');
    const gap = (await gaps()).find((candidate) => candidate.kind === 'silent')!;
    expect(gap.detail).toContain('changed (health OK to Critical');
    expect(Date.parse(gap.since)).toBeLessThanOrEqual(silencedAt);
    expect(await pushedEvents()).toEqual([]);
  });

  it('lost on reboot: the audit finds the BMC lists no subscription, a subscription-lost gap, and the subscription is re-created', async () => {
    fleet = await startPushFleet();
    const { sim, bmc } = fleet;
    await until(async () => (await streamsOpened()) === 1, 10_000, 'a stream opened');
    sim.injectFault({ kind: 'reset', target: { bmc: bmc.id } });
    await until(async () => (await gaps()).some((gap) => gap.kind === 'subscription-lost'), 10_000, 'a subscription-lost gap');
    await until(async () => (await streamsOpened()) === 2, 10_000, 'the stream opened again');
    sim.injectFault({ kind: 'health', target: { bmc: bmc.id }, health: 'Warning' });
    await until(async () => (await pushedEvents()).length === 1, 5_000, 'an event on the new stream');
  });

  it('stalled: a stream with a heartbeat that sends nothing for three of them is a stalled gap, since its last record', async () => {
    fleet = await startPushFleet({ heartbeatMs: 100, policy: { auditIntervalS: 30 } });
    const { sim, bmc } = fleet;
    await until(async () => (await streamsOpened()) === 1, 10_000, 'a stream opened');
    const stalledAt = Date.now();
    sim.injectFault({ kind: 'push-stall', target: { bmc: bmc.id } });
    await until(async () => (await gaps()).some((gap) => gap.kind === 'stalled'), 5_000, 'a stalled gap');
    const gap = (await gaps()).find((candidate) => candidate.kind === 'stalled')!;
    expect(Date.parse(gap.since)).toBeLessThanOrEqual(stalledAt + 50);
    expect(Date.parse(gap.detectedAt) - stalledAt).toBeLessThan(1_500);
    await until(async () => (await streamsOpened()) === 2, 10_000, 'the stream opened again');
  });

  it('a connection cap: a BMC that refuses the stream is a refused gap, and the node is polled as before', async () => {
    fleet = await startPushFleet();
    const { sim, bmc } = fleet;
    sim.injectFault({ kind: 'push-connection-cap', target: { bmc: bmc.id }, count: 1 });
    others.push(await openEventStream({ baseUrl: bmc.baseUrl, uri: '/redfish/v1/EventService/SSE', username: bmc.username, password: bmc.password, connectTimeoutMs: 5_000, onRecord: () => undefined }));
    await until(async () => (await gaps()).some((gap) => gap.kind === 'refused'), 10_000, 'a refused gap');
    const checks = checksAnswered(fleet);
    const requests = sim.bmcStats(bmc.id)!.requests;
    await until(() => (checksAnswered(fleet!)) >= checks + 3, 5_000, 'three more checks');
    expect(sim.bmcStats(bmc.id)!.requests).toBeGreaterThanOrEqual(requests + 3);
    expect(await streamsOpened()).toBe(0);
  });

  it('duplicate and out-of-order events: each recorded once, each stamped with when the BMC says it happened', async () => {
    fleet = await startPushFleet({ policy: { auditIntervalS: 30 } });
    const { sim, bmc } = fleet;
    await until(async () => (await streamsOpened()) === 1, 10_000, 'a stream opened');
    sim.injectFault({ kind: 'push-duplicate', target: { bmc: bmc.id }, duration: '1h' });
    sim.injectFault({ kind: 'push-reorder', target: { bmc: bmc.id }, duration: '1h' });
    sim.injectFault({ kind: 'health', target: { bmc: bmc.id }, health: 'Warning' });
    const first = sim.clock.now();
    await until(() => sim.clock.now() > first + 2, 1_000, 'the BMC clock moved', 1);
    sim.injectFault({ kind: 'health', target: { bmc: bmc.id }, health: 'Critical' });
    await until(async () => (await pushedEvents()).length === 2, 5_000, 'two events recorded');
    await fleet.poller.stop();
    const events = await pushedEvents();
    const ids = events.map((event) => Number(event.eventId));
    expect(ids[0]).toBe(ids[1]! + 1); // the later event arrived first, and is recorded first
    for (const event of events) expect(event.observedAt).toBe(event.eventTimestamp);
    const byWhen = [...events].sort((a, b) => Date.parse(a.observedAt!) - Date.parse(b.observedAt!));
    expect(byWhen.map((event) => event.severity)).toEqual(['Warning', 'Critical']);
    expect(fleet.poller.stats().push!.duplicatesDropped).toBe(2);
  });

  it('a BMC with too few sessions for a stream beside a check and a read gets no stream, and never more sessions than its limit', async () => {
    fleet = await startPushFleet({ sessionLimit: 2 });
    const { sim, bmc } = fleet;
    const checks = checksAnswered(fleet);
    await until(() => (checksAnswered(fleet!)) >= checks + 6, 10_000, 'six checks');
    expect(sim.bmcStats(bmc.id)!.requests).toBeGreaterThan(6);
    expect(fleet.poller.stats().push!.streamsOpened).toBe(0);
    expect(sim.bmcStats(bmc.id)!.sessionsPeak).toBeLessThanOrEqual(2);
  });
});
