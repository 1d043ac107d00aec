/**
 * An audit export of one site's log, written by the centre from the copy it replicated and witnessed: the same
 * format as a site's own (`fleet-ledger audit export v1`, replay/audit/export.ts), so the same offline verifier checks
 * it against the site's own key. It covers positions 1 to the newest checkpoint the centre witnessed (or `to`, at most
 * that): only what the centre proved against the site's signatures. The leaf of each row is computed from its hash
 * (the centre keeps no tiles; the witness proved these rows give the signed roots). Read in one snapshot.
 */
import type pg from 'pg';
import { exportMagic, type ExportHeader } from '../../replay/audit/index.js';
import { leafHash } from '../../replay/merkle/index.js';
import { canonicalEvent } from '../ledger/index.js';
import { CentreError } from './centre-errors.js';

const page = 5_000;

/** The witnessed prefix of the site, and its origin; refused when there is nothing witnessed to export. */
async function witnessedRange(client: pg.ClientBase, site: string, to: number | undefined): Promise<{ origin: string; to: number }> {
  const row = (await client.query<{ origin: string | null; witnessed_size: string }>('SELECT origin, witnessed_size FROM fleet_site_witness WHERE site = $1', [site])).rows[0];
  if (!row) throw new CentreError('CENTRE_NOT_FOUND', { resource: 'site', id: site }, `no site ${site} here`);
  const witnessed = Number(row.witnessed_size);
  if (witnessed === 0 || row.origin === null) throw new CentreError('CENTRE_NOT_FOUND', { resource: 'witnessed checkpoint', id: site }, `the centre has witnessed no checkpoint of site ${site} yet`);
  if (to !== undefined && (to < 1 || to > witnessed)) throw new CentreError('CENTRE_INVALID_REQUEST', { field: 'to', reason: `between 1 and ${witnessed} (the newest checkpoint of ${site} the centre witnessed)` }, `to must be between 1 and ${witnessed}`);
  return { origin: row.origin, to: to ?? witnessed };
}

async function* linesInSnapshot(client: pg.ClientBase, site: string, options: { to?: number }): AsyncGenerator<string> {
  const { origin, to } = await witnessedRange(client, site, options.to);
  const header: ExportHeader = { origin, from: 1, to, prefix: { size: 0, peaks: [] }, exportedAt: new Date().toISOString() };
  yield `${exportMagic}\n`;
  yield `H ${JSON.stringify(header)}\n`;
  const checkpoints = await client.query<{ signed_note: string }>('SELECT signed_note FROM ledger_checkpoints WHERE site = $1 AND size <= $2 ORDER BY size', [site, to]);
  for (const row of checkpoints.rows) yield `C ${Buffer.from(row.signed_note, 'utf8').toString('base64')}\n`;
  for (let at = 1; at <= to; at += page) {
    const { rows } = await client.query('SELECT * FROM ledger_events WHERE site = $1 AND position >= $2 AND position <= $3 ORDER BY position', [site, at, Math.min(to, at + page - 1)]);
    let chunk = '';
    for (const row of rows) {
      const hash = row.hash as Buffer;
      const canonical = canonicalEvent({ position: Number(row.position), eventId: row.event_id, stream: row.stream, streamVersion: row.stream_version, type: row.type, schemaVersion: row.schema_version, recordedAt: row.recorded_at, observedAt: row.observed_at, actor: row.actor, correlationId: row.correlation_id, causationId: row.causation_id, data: row.data });
      chunk += `E ${row.position}\t${(row.prev_hash as Buffer).toString('hex')}\t${hash.toString('hex')}\t${leafHash(hash).toString('hex')}\t${canonical}\n`;
    }
    yield chunk;
  }
}

/** The lines of the site's export, read in one REPEATABLE READ snapshot held for the whole stream. */
export async function* siteExportLines(pool: pg.Pool, site: string, options: { to?: number } = {}): AsyncGenerator<string> {
  const client = await pool.connect();
  let done = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    yield* linesInSnapshot(client, site, options);
    await client.query('COMMIT');
    done = true;
  } finally {
    if (!done) await client.query('ROLLBACK').catch(() => undefined);
    client.release(!done);
  }
}
