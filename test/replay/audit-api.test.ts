import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditService, openCheckpoint, verifyExport } from '../../replay/audit/index.js';
import { verifyConsistency, verifyInclusion } from '../../replay/merkle/rfc9162.js';
import { buildApi, type ZodApp } from '../../src/api/index.js';
import { EventStore } from '../../src/ledger/index.js';
import { bearer, tokenTable } from '../api/support/api-harness.js';
import { backends, freshDatabase } from '../support/backends.js';
import { cordon } from '../support/ledger-fixtures.js';

/** The transparency log through the API: what is public, what needs the auditor, and that every answer checks out. */
describe('the audit routes', () => {
  const folder = mkdtempSync(join(tmpdir(), 'fleet-ledger-audit-api-'));
  let store: EventStore;
  let audit: AuditService;
  let app: ZodApp;
  let drop: () => Promise<void>;
  const hex = (h: string) => Buffer.from(h, 'hex');

  beforeAll(async () => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    store = await EventStore.open({ connectionString: db.url });
    audit = await AuditService.start({ connectionString: db.url, dataDir: folder, publishDir: false, checkpointIntervalMs: 3_600_000 });
    for (let i = 0; i < 7; i++) await store.append(`node-n${i}`, Array.from({ length: 10 }, (_, j) => cordon(`n${i}`, `r${j}`)));
    await audit.checkpointNow();
    await store.append('node-n9', [cordon('n9')]);
    await audit.checkpointNow();
    app = await buildApi({ store, tokens: tokenTable, audit });
  });
  afterAll(async () => {
    await app?.close();
    await audit?.stop();
    await store?.close();
    await drop?.();
    rmSync(folder, { recursive: true, force: true });
  });

  it('the checkpoint, the public key and consistency proofs are public, and the proof holds between two signed roots', async () => {
    const key = (await app.inject({ url: '/v1/audit/public-key' })).body.trim();
    expect(key).toBe(audit.signer.verifierKey);
    const newest = openCheckpoint((await app.inject({ url: '/v1/audit/checkpoint' })).body, key);
    const older = openCheckpoint((await app.inject({ url: '/v1/audit/checkpoints/70' })).body, key);
    expect([older.size, newest.size]).toEqual([70, 71]);
    const proof = (await app.inject({ url: '/v1/audit/proofs/consistency?from=70&to=71' })).json();
    expect(verifyConsistency(70, 71, older.root, newest.root, proof.proof.map(hex))).toBe(true);
    expect((await app.inject({ url: '/v1/audit/checkpoints/69' })).statusCode).toBe(404);
    const beyond = await app.inject({ url: '/v1/audit/proofs/consistency?from=70&to=500' });
    expect(beyond.statusCode).toBe(400);
    expect(beyond.json().error.code).toBe('API_INVALID_REQUEST');
  });

  it('an inclusion proof needs the auditor role and verifies against the signed root', async () => {
    expect((await app.inject({ url: '/v1/audit/proofs/inclusion?position=5' })).statusCode).toBe(401);
    expect((await app.inject({ url: '/v1/audit/proofs/inclusion?position=5', headers: bearer('analyst') })).statusCode).toBe(403);
    const proof = (await app.inject({ url: '/v1/audit/proofs/inclusion?position=5', headers: bearer('auditor') })).json();
    const signed = openCheckpoint((await app.inject({ url: '/v1/audit/checkpoint' })).body, audit.signer.verifierKey);
    expect(verifyInclusion(hex(proof.leafHash), 4, signed.size, proof.proof.map(hex), signed.root)).toBe(true);
  });

  it('an export streamed to the auditor verifies offline; analysts may not export', async () => {
    expect((await app.inject({ url: '/v1/audit/export', headers: bearer('analyst') })).statusCode).toBe(403);
    const answer = await app.inject({ url: '/v1/audit/export?from=20', headers: bearer('auditor') });
    expect(answer.statusCode).toBe(200);
    const file = join(folder, 'export.txt');
    writeFileSync(file, answer.body);
    expect(await verifyExport(file, { key: audit.signer.verifierKey })).toMatchObject({ ok: true, from: 20, to: 71, events: 52 });
    const bad = await app.inject({ url: '/v1/audit/export?from=900', headers: bearer('auditor') });
    expect(bad.statusCode).toBe(400);
  });
});
