import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditService, Checkpointer, exportLines, loadOrCreateSigner, verifyExport } from '../../replay/audit/index.js';
import { chainHash, EventStore } from '../../src/ledger/index.js';
import { canonicalEvent, storedEvent } from '../../src/ledger/event-row.js';
import { run as witness } from '../../src/cli/commands/witness.js';
import { backends, freshDatabase } from '../support/backends.js';
import { cordon } from '../support/ledger-fixtures.js';

/**
 * Each tampering is done as the attacker the chain alone cannot stop: a database superuser who steps around the
 * log's triggers (`session_replication_role = replica`) and may recompute hashes. The auditor holds what was
 * published before the tampering (a signed checkpoint, or a copy of the published folder) and the public key, and
 * checks an export made after it, offline.
 */
const folder = mkdtempSync(join(tmpdir(), 'fleet-ledger-tamper-'));
const keyPath = join(folder, 'signer.key');

interface Ledger {
  url: string;
  store: EventStore;
  audit: AuditService;
  admin: pg.Client;
  publishDir: string;
  drop: () => Promise<void>;
}

const opened: Ledger[] = [];

async function ledgerWith(events: number, name: string): Promise<Ledger> {
  const db = await freshDatabase(backends()[0]!.adminUrl!);
  const store = await EventStore.open({ connectionString: db.url });
  const publishDir = join(folder, `${name}-published`);
  const audit = await AuditService.start({ connectionString: db.url, dataDir: folder, keyPath, publishDir, checkpointIntervalMs: 3_600_000 });
  await appendCordons(store, events, 'original');
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  await admin.query('SET session_replication_role = replica');
  const ledger = { url: db.url, store, audit, admin, publishDir, drop: db.drop };
  opened.push(ledger);
  return ledger;
}

async function appendCordons(store: EventStore, count: number, tag: string): Promise<void> {
  for (let i = 0; i < count; i += 10) await store.append(`node-${tag}-${i % 7}`, Array.from({ length: Math.min(10, count - i) }, (_, j) => cordon(`n${(i + j) % 13}`, `${tag} ${i + j}`)));
}

/** What the auditor keeps: the checkpoint note and a copy of the published folder, as of now. */
async function keep(ledger: Ledger, name: string): Promise<{ note: string; dir: string }> {
  await ledger.audit.checkpointNow();
  const dir = join(folder, `${name}-kept`);
  cpSync(ledger.publishDir, dir, { recursive: true });
  const note = join(folder, `${name}-checkpoint`);
  cpSync(join(ledger.publishDir, 'checkpoint'), note);
  return { note, dir };
}

async function exportOf(ledger: Ledger, name: string, options: { from?: number; to?: number } = {}): Promise<string> {
  const file = join(folder, `${name}.export`);
  let text = '';
  for await (const chunk of exportLines(ledger.audit.pool, options)) text += chunk;
  writeFileSync(file, text);
  return file;
}

/** Rewrites the chain from `from` to the end as a careful attacker would: every hash recomputed, the head too. */
async function rechain(admin: pg.Client, from: number): Promise<void> {
  const rows = (await admin.query('SELECT * FROM ledger_events WHERE position >= $1 ORDER BY position', [from - 1])).rows;
  let prev = from - 1 >= 1 ? (rows.shift().hash as Buffer).toString('hex') : '0'.repeat(64);
  for (const row of rows) {
    const hash = chainHash(prev, canonicalEvent(storedEvent(row)));
    await admin.query('UPDATE ledger_events SET prev_hash = $1, hash = $2 WHERE position = $3', [Buffer.from(prev, 'hex'), Buffer.from(hash, 'hex'), row.position]);
    prev = hash;
  }
  await admin.query('UPDATE ledger_head SET position = (SELECT max(position) FROM ledger_events), hash = $1', [Buffer.from(prev, 'hex')]);
}

/** The attacker also rebuilds the transparency log's tables from the rewritten rows (they are derived data). */
async function rebuildTree(ledger: Ledger): Promise<void> {
  await ledger.admin.query('DELETE FROM ledger_merkle_tiles');
  await ledger.admin.query(`UPDATE ledger_merkle_state SET size = 0, peaks = '\\x'::bytea, root = sha256(''::bytea), last_hash = decode(repeat('00', 32), 'hex')`);
  await ledger.audit.follower.catchUp();
}

/**
 * The ledger itself refuses to sign a log that disagrees with what it published (`log-integrity.ts`); the attacker who
 * also took the signing key runs a signer without that check, and the offline verifier and the witness must still
 * name what it signed.
 */
async function attackerSigns(ledger: Ledger): Promise<void> {
  await expect(ledger.audit.checkpointNow()).rejects.toMatchObject({ code: 'AUDIT_SIGNING_STOPPED' });
  const signer = new Checkpointer({ connectionString: ledger.url, signer: loadOrCreateSigner(keyPath, ledger.audit.origin), publishDir: ledger.publishDir });
  try {
    await signer.checkpointNow();
  } finally {
    await signer.stop();
  }
}

/** The witness, run as its CLI would be, reading the folder the ledger publishes to. */
async function witnessOnce(ledger: Ledger, key: string, state: string): Promise<number> {
  return witness(['--log-key', key, '--state', state, '--from-dir', ledger.publishDir]);
}

afterAll(async () => {
  for (const ledger of opened) {
    await ledger.admin.end().catch(() => undefined);
    await ledger.audit.stop().catch(() => undefined);
    await ledger.store.close().catch(() => undefined);
    await ledger.drop().catch(() => undefined);
  }
  rmSync(folder, { recursive: true, force: true });
});

describe('the offline verifier, against a checkpoint published before the tampering', () => {
  let key: string;
  beforeAll(async () => {
    const probe = await ledgerWith(0, 'probe');
    key = probe.audit.signer.verifierKey;
  });

  it('passes an untouched log, from the start and from the middle (prefix proven by the signed root)', async () => {
    const ledger = await ledgerWith(300, 'untouched');
    const kept = await keep(ledger, 'untouched');
    // Every checkpoint signed is in the export and verified: the one kept, and one the background signer may have
    // made while the 300 events were being appended (its first tick races the appends).
    const signed = Number((await ledger.admin.query<{ n: string }>('SELECT count(*) AS n FROM ledger_checkpoints')).rows[0]!.n);
    expect(signed).toBeGreaterThanOrEqual(1);
    expect(await verifyExport(await exportOf(ledger, 'untouched-all'), { key, since: kept.dir })).toMatchObject({ ok: true, events: 300, checkpoints: signed });
    expect(await verifyExport(await exportOf(ledger, 'untouched-tail', { from: 123 }), { key, since: kept.note })).toMatchObject({ ok: true, events: 178 });
  });

  it('(a) a row whose data was altered is named', async () => {
    const ledger = await ledgerWith(300, 'a');
    const kept = await keep(ledger, 'a');
    await ledger.admin.query(`UPDATE ledger_events SET data = jsonb_set(data, '{reason}', '"nothing happened"') WHERE position = 120`);
    const report = await verifyExport(await exportOf(ledger, 'a'), { key, since: kept.note });
    expect(report).toMatchObject({ ok: false, firstBadPosition: 120 });
    expect(report.reason).toMatch(/altered/);
  });

  it('(b) a row rewritten with every later hash and the head recomputed is named: the chain alone passes it', async () => {
    const ledger = await ledgerWith(300, 'b');
    const kept = await keep(ledger, 'b');
    await ledger.admin.query(`UPDATE ledger_events SET actor = '{"kind":"operator","id":"someone-else"}' WHERE position = 120`);
    await rechain(ledger.admin, 120);
    expect(await ledger.store.verifyChain()).toMatchObject({ ok: true });
    const report = await verifyExport(await exportOf(ledger, 'b'), { key, since: kept.note });
    expect(report).toMatchObject({ ok: false, firstBadPosition: 120 });
    // Even with the tree's tables rebuilt from the rewritten rows, the published folder the auditor kept names it.
    await rebuildTree(ledger);
    const rebuilt = await verifyExport(await exportOf(ledger, 'b-rebuilt', { to: 300 }), { key, since: kept.dir });
    expect(rebuilt).toMatchObject({ ok: false, firstBadPosition: 120 });
  });

  it('(c) the tail deleted and the head rewound is named at the first missing position: the chain alone passes it', async () => {
    const ledger = await ledgerWith(300, 'c');
    const kept = await keep(ledger, 'c');
    const witnessState = join(folder, 'c-witness');
    expect(await witnessOnce(ledger, key, witnessState)).toBe(0);
    await ledger.admin.query('DELETE FROM ledger_events WHERE position > 250');
    await ledger.admin.query('DELETE FROM ledger_checkpoints WHERE size > 250');
    await ledger.admin.query('UPDATE ledger_head SET position = 250, hash = (SELECT hash FROM ledger_events WHERE position = 250)');
    await rebuildTree(ledger);
    await attackerSigns(ledger);
    expect(await ledger.store.verifyChain()).toMatchObject({ ok: true });
    for (const since of [kept.note, kept.dir]) {
      const report = await verifyExport(await exportOf(ledger, 'c', { to: 300 }), { key, since });
      expect(report).toMatchObject({ ok: false, firstBadPosition: 251 });
      expect(report.reason).toMatch(/truncated or rolled back/);
    }
    // The rewound ledger signed and published a smaller checkpoint: the witness refuses it and raises the alarm.
    expect(await witnessOnce(ledger, key, witnessState)).toBe(4);
    expect(JSON.parse(readFileSync(join(witnessState, 'alarm.json'), 'utf8')).reason).toMatch(/rollback/);
    expect(JSON.parse(readFileSync(join(witnessState, 'seen.json'), 'utf8')).size).toBe(300);
  });

  it('(d) a row inserted is named at its position', async () => {
    const ledger = await ledgerWith(300, 'd');
    const kept = await keep(ledger, 'd');
    await ledger.admin.query('UPDATE ledger_events SET position = position + 1000000 WHERE position >= 150');
    await ledger.admin.query('UPDATE ledger_events SET position = position - 999999 WHERE position >= 1000000');
    // A forged row that links correctly to the one before it.
    const before = storedEvent((await ledger.admin.query('SELECT * FROM ledger_events WHERE position = 149')).rows[0]);
    const forged = { ...before, position: 150, eventId: '018f0000-0000-7000-8000-00000000f0f0', streamVersion: 9999, data: { nodeId: 'n1', reason: 'forged' } };
    const hash = chainHash(before.hash!, canonicalEvent(forged));
    await ledger.admin.query(
      `INSERT INTO ledger_events (position, event_id, stream, stream_version, type, schema_version, recorded_at, observed_at, actor, correlation_id, causation_id, data, prev_hash, hash)
       VALUES (150, $1, $2, 9999, $3, $4, $5, $6, $7, NULL, NULL, $8, $9, $10)`,
      [forged.eventId, forged.stream, forged.type, forged.schemaVersion, forged.recordedAt, forged.observedAt, JSON.stringify(forged.actor), JSON.stringify(forged.data), Buffer.from(before.hash!, 'hex'), Buffer.from(hash, 'hex')],
    );
    const report = await verifyExport(await exportOf(ledger, 'd', { to: 300 }), { key, since: kept.note });
    expect(report).toMatchObject({ ok: false, firstBadPosition: 150 });
  });

  it('(e) two rows swapped are named at the first of them', async () => {
    const ledger = await ledgerWith(300, 'e');
    const kept = await keep(ledger, 'e');
    await ledger.admin.query('UPDATE ledger_events SET position = -1 WHERE position = 200');
    await ledger.admin.query('UPDATE ledger_events SET position = 200 WHERE position = 201');
    await ledger.admin.query('UPDATE ledger_events SET position = 201 WHERE position = -1');
    const report = await verifyExport(await exportOf(ledger, 'e'), { key, since: kept.note });
    expect(report).toMatchObject({ ok: false, firstBadPosition: 200 });
  });

  it('(f) an older backup restored and new events appended on it (a fork) is named: the chain alone passes it', async () => {
    const ledger = await ledgerWith(200, 'f');
    await ledger.audit.checkpointNow();
    const tables = ['ledger_events', 'ledger_head', 'ledger_streams', 'ledger_merkle_tiles', 'ledger_merkle_state', 'ledger_checkpoints'];
    for (const table of tables) await ledger.admin.query(`CREATE TABLE backup_${table} AS SELECT * FROM ${table}`);
    await appendCordons(ledger.store, 100, 'after-backup');
    const kept = await keep(ledger, 'f');
    const witnessState = join(folder, 'f-witness');
    expect(await witnessOnce(ledger, key, witnessState)).toBe(0);
    for (const table of tables) await ledger.admin.query(`DELETE FROM ${table}; INSERT INTO ${table} SELECT * FROM backup_${table}`);
    // The restored ledger goes on: new events, a new checkpoint signed with the same key.
    const store = await EventStore.open({ connectionString: ledger.url });
    await appendCordons(store, 150, 'fork');
    await store.close();
    await ledger.audit.follower.catchUp();
    await attackerSigns(ledger);
    expect(await ledger.store.verifyChain()).toMatchObject({ ok: true });
    const signedAlone = await verifyExport(await exportOf(ledger, 'f-alone'), { key });
    expect(signedAlone.ok).toBe(true); // consistent with itself: only what was kept outside shows the fork
    const withNote = await verifyExport(await exportOf(ledger, 'f'), { key, since: kept.note });
    expect(withNote).toMatchObject({ ok: false, since: { consistent: false } });
    const withFolder = await verifyExport(await exportOf(ledger, 'f'), { key, since: kept.dir });
    expect(withFolder).toMatchObject({ ok: false, firstBadPosition: 201 });
    // The fork is larger than what the witness co-signed, but does not extend it: refused.
    expect(await witnessOnce(ledger, key, witnessState)).toBe(4);
    expect(JSON.parse(readFileSync(join(witnessState, 'alarm.json'), 'utf8')).reason).toMatch(/fork/);
    expect(existsSync(join(witnessState, 'cosigned', '350'))).toBe(false);
  });
});
