import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { LedgerIntegrityAlarmRaised } from '../../events/index.js';
import { AuditService, LogIntegrityMonitor } from '../../replay/audit/index.js';
import { buildApi } from '../../src/api/index.js';
import { chainHash, EventStore } from '../../src/ledger/index.js';
import { canonicalEvent, storedEvent } from '../../src/ledger/event-row.js';
import { tokenTable } from '../api/support/api-harness.js';
import { backends, freshDatabase } from '../support/backends.js';
import { cordon } from '../support/ledger-fixtures.js';

/**
 * Tampering is noticed by the running ledger, not only by an offline auditor. Each case is done as the attacker the
 * chain alone cannot stop: a database superuser who steps around the log's triggers (`session_replication_role =
 * replica`). On each, at the next start (or while running), the ledger raises a critical alarm with the finding's code,
 * `/readyz` fails with it, the metric says it, signing stops, and no append reuses a signed position.
 */
const folder = mkdtempSync(join(tmpdir(), 'fleet-ledger-online-tamper-'));
const keyPath = join(folder, 'signer.key');

interface Ledger {
  url: string;
  publishDir: string;
  store: EventStore;
  audit: AuditService;
  app: FastifyInstance;
  drop: () => Promise<void>;
}

const opened: Ledger[] = [];

/** Starts the ledger on `url` as `fleet-ledger start` wires it: the store sealed by the audit service, the API on top. */
async function start(url: string, publishDir: string, drop: () => Promise<void>): Promise<Ledger> {
  const store = await EventStore.open({ connectionString: url });
  const audit = await AuditService.start({ connectionString: url, dataDir: folder, keyPath, publishDir, store, checkpointIntervalMs: 3_600_000, integrityIntervalMs: 3_600_000 });
  const app = await buildApi({ store, tokens: tokenTable, audit });
  const ledger = { url, publishDir, store, audit, app, drop };
  opened.push(ledger);
  return ledger;
}

async function stop(ledger: Ledger): Promise<void> {
  await ledger.app.close();
  await ledger.audit.stop();
  await ledger.store.close();
}

/** A ledger with `events` events, folded into the tree and a checkpoint of them signed and published. */
async function ledgerWith(events: number, name: string): Promise<Ledger> {
  const db = await freshDatabase(backends()[0]!.adminUrl!);
  const ledger = await start(db.url, join(folder, `${name}-published`), db.drop);
  await appendCordons(ledger.store, events, name);
  expect(await ledger.audit.checkpointNow()).toMatchObject({ size: events });
  return ledger;
}

async function appendCordons(store: EventStore, count: number, tag: string): Promise<void> {
  for (let i = 0; i < count; i += 10) await store.append(`node-${tag}-${i % 7}`, Array.from({ length: Math.min(10, count - i) }, (_, j) => cordon(`n${(i + j) % 13}`, `${tag} ${i + j}`)));
}

/** Runs statements as a superuser around the log's append-only triggers. */
async function asSuperuser(url: string, work: (admin: pg.Client) => Promise<void>): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query('SET session_replication_role = replica');
    await work(admin);
  } finally {
    await admin.end();
  }
}

async function deleteTailAndRewindHead(admin: pg.Client, keep: number): Promise<void> {
  await admin.query('DELETE FROM ledger_events WHERE position > $1', [keep]);
  await admin.query('UPDATE ledger_head SET position = $1, hash = (SELECT hash FROM ledger_events WHERE position = $1)', [keep]);
}

/** Every alarm channel names `code`: the service's status, `/readyz`, the metric; and signing has stopped. */
async function expectAlarmed(ledger: Ledger, code: string): Promise<void> {
  expect(ledger.audit.integrity.status.alarm).toMatchObject({ kind: 'ledger-integrity', severity: 'critical', code });
  expect(await ledger.audit.status()).toMatchObject({ integrityAlarm: { code } });
  const ready = await ledger.app.inject({ method: 'GET', url: '/readyz' });
  expect(ready.statusCode).toBe(503);
  expect(ready.json()).toMatchObject({ status: 'not-ready', integrity: { code }, error: { code: 'API_NOT_READY', details: { integrity: code } } });
  expect((await ledger.app.inject({ method: 'GET', url: '/metrics' })).body).toContain(`fleet_ledger_integrity_alarm{code="${code}"} 1`);
  await expect(ledger.audit.checkpointer.checkpointNow()).rejects.toMatchObject({ code: 'AUDIT_SIGNING_STOPPED' });
}

/** A monitor of its own on the ledger's database, reading in small pages (a stretch of large events cuts a page short). */
async function smallPageFinding(ledger: Ledger): Promise<unknown> {
  const pool = new pg.Pool({ connectionString: ledger.url, max: 2 });
  try {
    const monitor = new LogIntegrityMonitor({ pool, verifierKey: ledger.audit.signer.verifierKey, publishDir: ledger.publishDir, sweepRows: 7, sweepBytes: 600 });
    return await monitor.checkNow({ sweep: 'all' });
  } finally {
    await pool.end();
  }
}

/** The alarm as recorded in the log (`LedgerIntegrityAlarmRaised`, opened as critical by the alarms projection). */
async function alarmEvents(ledger: Ledger): Promise<Array<{ code: string }>> {
  for (let waited = 0; ; waited += 100) {
    const events = await ledger.store.readStream('ledger-integrity');
    if (events.length > 0 || waited >= 2_000) return events.map((event) => ({ code: LedgerIntegrityAlarmRaised.schema.parse(event.data).code }));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function expectPositionRefused(ledger: Ledger, position: number, signedSize: number): Promise<void> {
  await expect(ledger.store.append('node-after-tamper', [cordon('n1', 'after the tampering')])).rejects.toMatchObject({ code: 'LEDGER_POSITION_SIGNED', retryable: false, details: { position, signedSize } });
  expect((await ledger.store.head()).position).toBe(position - 1);
}

/**
 * A ledger of 200 signed events whose database is copied, then 100 more appended and a checkpoint of 300 published;
 * stopped, its database put back as the copy had it (the published folder kept), and started again.
 */
async function restartOnOlderCopy(name: string): Promise<Ledger> {
  const ledger = await ledgerWith(200, name);
  const tables = ['ledger_events', 'ledger_head', 'ledger_streams', 'ledger_merkle_tiles', 'ledger_merkle_state', 'ledger_checkpoints'];
  await asSuperuser(ledger.url, async (admin) => {
    for (const table of tables) await admin.query(`CREATE TABLE backup_${table} AS SELECT * FROM ${table}`);
  });
  await appendCordons(ledger.store, 100, 'after-backup');
  expect(await ledger.audit.checkpointNow()).toMatchObject({ size: 300 });
  await stop(ledger);
  await asSuperuser(ledger.url, async (admin) => {
    for (const table of tables) await admin.query(`DELETE FROM ${table}; INSERT INTO ${table} SELECT * FROM backup_${table}`);
  });
  return start(ledger.url, ledger.publishDir, ledger.drop);
}

afterAll(async () => {
  for (const ledger of opened) {
    await stop(ledger).catch(() => undefined);
  }
  for (const drop of new Set(opened.map((ledger) => ledger.drop))) await drop().catch(() => undefined);
  rmSync(folder, { recursive: true, force: true });
});

describe('tampering is noticed online', () => {
  it('an untouched log raises nothing at start and is ready', async () => {
    const ledger = await ledgerWith(120, 'untouched');
    await stop(ledger);
    const again = await start(ledger.url, ledger.publishDir, ledger.drop);
    expect(await again.audit.integrity.checkNow({ sweep: 'all' })).toBeNull();
    expect(again.audit.integrity.status.alarm).toBeNull();
    expect(await smallPageFinding(again)).toBeNull();
    expect((await again.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    await again.store.append('node-later', [cordon('n1', 'later')]);
    expect(await again.audit.checkpointNow()).toMatchObject({ size: 121 });
  });

  it('a new database beside a folder another log published to raises nothing (another origin is not this history)', async () => {
    const other = await ledgerWith(50, 'other-origin');
    await stop(other);
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    const fresh = await start(db.url, other.publishDir, db.drop);
    expect(await fresh.audit.integrity.checkNow({ sweep: 'all' })).toBeNull();
    await fresh.store.append('node-fresh', [cordon('n1', 'first of a new log')]);
    expect(await fresh.audit.checkpointNow()).toMatchObject({ size: 1 });
  });

  it('the tail deleted and the head rewound while stopped: alarm at the next start, and the next append does not reuse a signed position', async () => {
    // Given a ledger whose 300 events were signed and published, stopped
    const ledger = await ledgerWith(300, 'tail');
    await stop(ledger);
    // When a superuser deletes the tail and rewinds the head (the tree's tables left as they were: the case)
    await asSuperuser(ledger.url, (admin) => deleteTailAndRewindHead(admin, 250));
    const again = await start(ledger.url, ledger.publishDir, ledger.drop);
    // Then the ledger says so at start, and position 251 (signed) is never taken again
    await expectAlarmed(again, 'AUDIT_TREE_BEYOND_LOG');
    expect(await again.audit.status()).toMatchObject({ treeSize: 300, headPosition: 250, lagPositions: -50 });
    await expectPositionRefused(again, 251, 300);
    // Any other writer too (another process, a worker thread): the tree stored in the database bounds every append
    const other = await EventStore.open({ connectionString: ledger.url });
    try {
      await expect(other.append('node-other-writer', [cordon('n2', 'from another process')])).rejects.toMatchObject({ code: 'LEDGER_POSITION_SIGNED', details: { position: 251, signedSize: 300 } });
    } finally {
      await other.close();
    }
    // Not in the log: that append would reuse a signed position too
    expect(await alarmEvents(again)).toEqual([]);
  });

  it('the tail deleted, the head rewound and the tree rebuilt from the rows while stopped: the published checkpoint shows it', async () => {
    const ledger = await ledgerWith(300, 'rebuilt');
    await stop(ledger);
    await asSuperuser(ledger.url, async (admin) => {
      await deleteTailAndRewindHead(admin, 250);
      await admin.query('DELETE FROM ledger_checkpoints WHERE size > 250');
      await admin.query('DELETE FROM ledger_merkle_tiles');
      await admin.query(`UPDATE ledger_merkle_state SET size = 0, peaks = '\\x'::bytea, root = sha256(''::bytea), last_hash = decode(repeat('00', 32), 'hex')`);
    });
    const again = await start(ledger.url, ledger.publishDir, ledger.drop);
    await expectAlarmed(again, 'AUDIT_HEAD_BEHIND_CHECKPOINT');
    expect(again.audit.integrity.status.alarm?.finding).toMatchObject({ checkpoint: 'published', checkpointSize: 300, headPosition: 250 });
    await expectPositionRefused(again, 251, 300);
  });

  it("the tree's tiles deleted while stopped (its state left): alarm at the next start", async () => {
    const ledger = await ledgerWith(300, 'tiles');
    await stop(ledger);
    await asSuperuser(ledger.url, (admin) => admin.query('DELETE FROM ledger_merkle_tiles').then(() => undefined));
    const again = await start(ledger.url, ledger.publishDir, ledger.drop);
    await expectAlarmed(again, 'AUDIT_CHECKPOINT_MISMATCH');
  });

  it('a row rewritten with every later hash and the head recomputed while stopped: alarm at the next start', async () => {
    const ledger = await ledgerWith(300, 'rewritten');
    await stop(ledger);
    await asSuperuser(ledger.url, async (admin) => {
      await admin.query(`UPDATE ledger_events SET actor = '{"kind":"operator","id":"someone-else"}' WHERE position = 120`);
      const rows = (await admin.query('SELECT * FROM ledger_events WHERE position >= 119 ORDER BY position')).rows;
      let prev = (rows.shift().hash as Buffer).toString('hex');
      for (const row of rows) {
        const hash = chainHash(prev, canonicalEvent(storedEvent(row)));
        await admin.query('UPDATE ledger_events SET prev_hash = $1, hash = $2 WHERE position = $3', [Buffer.from(prev, 'hex'), Buffer.from(hash, 'hex'), row.position]);
        prev = hash;
      }
      await admin.query('UPDATE ledger_head SET hash = $1', [Buffer.from(prev, 'hex')]);
    });
    const again = await start(ledger.url, ledger.publishDir, ledger.drop);
    // The chain alone passes it; the leaves the tree recorded when it was signed do not
    expect(await again.store.verifyChain()).toMatchObject({ ok: true });
    await expectAlarmed(again, 'AUDIT_LEAF_MISMATCH');
    // Named at the first row rewritten, as the offline verifier names it
    expect(again.audit.integrity.status.alarm?.finding).toMatchObject({ position: 120 });
    expect(await smallPageFinding(again)).toMatchObject({ code: 'AUDIT_LEAF_MISMATCH', position: 120 });
    // The log still takes appends past what was signed: the alarm is recorded there, once
    expect(await alarmEvents(again)).toEqual([{ code: 'AUDIT_LEAF_MISMATCH' }]);
  });

  it('an older copy of the database restored while stopped (head behind the published checkpoint): alarm at the next start', async () => {
    const again = await restartOnOlderCopy('restored');
    await expectAlarmed(again, 'AUDIT_HEAD_BEHIND_CHECKPOINT');
    await expectPositionRefused(again, 201, 300);
  });

  it('an older copy restored: no writer of the process, whatever its thread, takes a position the published checkpoint signed', async () => {
    // Given a ledger that published a checkpoint of 300 events, restarted on a copy of its database taken at 200
    const again = await restartOnOlderCopy('restored-threads');
    await expectAlarmed(again, 'AUDIT_HEAD_BEHIND_CHECKPOINT');
    // When a store of its own appends, as the poller's, the projections' and the lease keeper's threads each open one
    // (`npm run bench:trust` saw such a writer take the positions the published checkpoint signed on a restored copy)
    const other = await EventStore.open({ connectionString: again.url });
    try {
      // Then it is refused too: the database, not only the main thread's store, holds the published size
      await expect(other.append('node-poller-thread', [cordon('n3', 'from another thread')])).rejects.toMatchObject({ code: 'LEDGER_POSITION_SIGNED', details: { position: 201, signedSize: 300 } });
    } finally {
      await other.close();
    }
    expect((await again.store.head()).position).toBe(200);
  });

  it('the tail deleted while the ledger runs: the next append is refused at once, and the next check raises the alarm', async () => {
    const ledger = await ledgerWith(300, 'running');
    await asSuperuser(ledger.url, (admin) => deleteTailAndRewindHead(admin, 250));
    await expectPositionRefused(ledger, 251, 300);
    expect(await ledger.audit.integrity.checkNow()).toMatchObject({ code: 'AUDIT_TREE_BEYOND_LOG' });
    await expectAlarmed(ledger, 'AUDIT_TREE_BEYOND_LOG');
  });

  it('no false alarm while appends commit: integrity checks, status and signing under a concurrent writer', async () => {
    const ledger = await ledgerWith(500, 'busy');
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) await ledger.store.append(`node-busy-${i % 9}`, [cordon(`n${i % 11}`, `busy ${i}`)]);
    })();
    try {
      for (let round = 0; round < 30; round++) {
        // The follower folds the writer's events in the background meanwhile (every 250 ms)
        const [finding, status] = await Promise.all([ledger.audit.integrity.checkNow(), ledger.audit.status()]);
        expect(finding).toBeNull();
        expect(status.lagPositions).toBeGreaterThanOrEqual(0);
        if (round % 10 === 0) await ledger.audit.checkpointer.checkpointNow();
      }
    } finally {
      writing = false;
      await writer;
    }
    expect(ledger.audit.integrity.status.alarm).toBeNull();
    expect(await ledger.audit.integrity.checkNow({ sweep: 'all' })).toBeNull();
  });
});
