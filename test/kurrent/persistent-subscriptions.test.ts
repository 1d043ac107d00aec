/**
 * Persistent subscriptions through the KurrentDB face: a consumer group's checkpoint is kept in PostgreSQL, so a group
 * whose consumers left (or whose server restarted) resumes after what was acknowledged; parked events wait in
 * PostgreSQL until they are replayed. And the face answers KurrentDB's health endpoints on its port.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARK, START, jsonEvent, persistentSubscriptionToStreamSettingsFromDefaults, type EventStoreDBClient, type PersistentSubscriptionToStream, type ResolvedEvent } from '@eventstore/db-client';
import { sql } from 'kysely';
import { openKurrentHarness, openssl, type KurrentHarness } from './support/kurrent-harness.js';

/** Events as a consumer gets them, each handled (acked, nacked) as it comes; `next(n)` waits for the next n. */
function consume(subscription: PersistentSubscriptionToStream, handle: (event: ResolvedEvent) => Promise<void>) {
  const seen: ResolvedEvent[] = [];
  subscription.on('data', (event: ResolvedEvent) => {
    void handle(event).then(() => seen.push(event));
  });
  subscription.on('error', () => undefined);
  return {
    async next(count: number): Promise<ResolvedEvent[]> {
      const start = seen.length;
      const until = Date.now() + 20_000;
      while (seen.length < start + count && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
      return seen.slice(start, start + count);
    },
  };
}

/** Waits until `probe` answers `wanted` (or 10 s pass), and answers what it last answered. */
async function eventually<T>(probe: () => Promise<T>, wanted: T): Promise<T> {
  const until = Date.now() + 10_000;
  let value = await probe();
  while (value !== wanted && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await probe();
  }
  return value;
}

describe.skipIf(!openssl.runnable)(openssl.title('persistent subscriptions through the KurrentDB face'), () => {
  let h: KurrentHarness;
  let admin: EventStoreDBClient;

  beforeAll(async () => {
    h = await openKurrentHarness();
    admin = h.client('admin');
  });
  afterAll(async () => h?.close());

  it('resumes a group after its acknowledged events, across a restart of the face, from the checkpoint in PostgreSQL', async () => {
    await admin.appendToStream('orders', Array.from({ length: 10 }, (_, index) => jsonEvent({ type: 'OrderPlaced', data: { index } })));
    await admin.createPersistentSubscriptionToStream('orders', 'billing', persistentSubscriptionToStreamSettingsFromDefaults({ startFrom: START, checkPointLowerBound: 1, checkPointAfter: 0 }));
    // The consumer acknowledges the first six and leaves the other four unanswered.
    const first = admin.subscribeToPersistentSubscriptionToStream('orders', 'billing');
    let answered = 0;
    const consumer = consume(first, async (event) => {
      answered += 1;
      if (answered <= 6) await first.ack(event);
    });
    const delivered = await consumer.next(10);
    expect(delivered.map((event) => (event.event!.data as { index: number }).index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // The checkpoint is a row of PostgreSQL: revision 5, the last of the six acknowledged in a row.
    const checkpoint = () => sql<{ checkpoint: string | null }>`SELECT checkpoint::text FROM kurrent_persistent_subscriptions WHERE group_name = 'billing'`.execute(h.store.db).then((result) => result.rows[0]?.checkpoint ?? null);
    expect(await eventually(checkpoint, '5')).toBe('5');
    await first.unsubscribe();

    // The face restarts; the group delivers what was not acknowledged, and only that.
    await h.restart();
    const client = h.client('admin');
    const second = client.subscribeToPersistentSubscriptionToStream('orders', 'billing');
    const rest = await consume(second, (event) => second.ack(event)).next(4);
    expect(rest.map((event) => (event.event!.data as { index: number }).index)).toEqual([6, 7, 8, 9]);
    expect(await eventually(checkpoint, '9')).toBe('9');
    await second.unsubscribe();
  });

  it('keeps parked events in PostgreSQL until they are replayed', async () => {
    await admin.appendToStream('invoices', Array.from({ length: 3 }, (_, index) => jsonEvent({ type: 'InvoiceIssued', data: { index } })));
    await admin.createPersistentSubscriptionToStream('invoices', 'mailer', persistentSubscriptionToStreamSettingsFromDefaults({ startFrom: START }));
    const subscription = admin.subscribeToPersistentSubscriptionToStream('invoices', 'mailer');
    let replaying = false;
    const consumer = consume(subscription, (event) => (replaying ? subscription.ack(event) : subscription.nack(PARK, 'smtp down', event)));
    await consumer.next(3);
    const parked = () => sql<{ n: string }>`SELECT count(*)::text AS n FROM kurrent_parked_messages WHERE group_name = 'mailer' AND NOT replay`.execute(h.store.db).then((result) => result.rows[0]!.n);
    expect(await eventually(parked, '3')).toBe('3');
    expect((await admin.getPersistentSubscriptionToStreamInfo('invoices', 'mailer')).stats.parkedMessageCount).toBe(3n);

    replaying = true;
    await admin.replayParkedMessagesToStream('invoices', 'mailer');
    const replayed = await consumer.next(3);
    expect(replayed.map((event) => (event.event!.data as { index: number }).index)).toEqual([0, 1, 2]);
    expect(await eventually(parked, '0')).toBe('0');
    await subscription.unsubscribe();
  });

  it('answers KurrentDB\'s health endpoints on its port, and 404 for the rest of KurrentDB\'s HTTP API', async () => {
    const get = (path: string, method = 'GET') =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: h.server.port, path, method, ca: [readFileSync(h.certificate.caPath)] }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    expect(await get('/ping')).toEqual({ status: 200, body: JSON.stringify({ msgTypeId: 0, text: 'Ping request successfully handled' }) });
    expect((await get('/health/live')).status).toBe(204);
    expect((await get('/streams/orders', 'POST')).status).toBe(404);
  });
});
