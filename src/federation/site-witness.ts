/**
 * The centre as the witness of a site's log. The partition triggers refuse what can be seen row by row (a rewrite, a
 * deletion, a second row at a held position, a broken link); this checks what needs the whole log:
 *
 * - the chain, in position order: each row's `prev_hash` is the hash of the row before it and its `hash` is what the
 *   ledger's rule gives for its content (`sha256(prev_hash || canonical(event))`), so a row the site altered before it
 *   was ever replicated, chain recomputed or not, is found against the checkpoints below; the read models only read
 *   this verified prefix;
 * - every checkpoint the site signed: its signature by the site's key (pinned when the site was added), its origin the
 *   same as the first one seen, and its root the RFC 9162 Merkle root the centre computes itself over the hashes it
 *   holds up to that size. A checkpoint proven so is co-signed with the centre's witness key and kept
 *   (`fleet_site_cosigned`); one that fails is refused (`fleet_site_refusals`), and the site with it.
 */
import type pg from 'pg';
import { canonicalEvent, chainHash, genesisHash } from '../ledger/index.js';
import { openCheckpoint } from '../../replay/audit/index.js';
import { addSignatures } from '../../replay/checkpoint/index.js';
import { leafHash, MerkleAccumulator } from '../../replay/merkle/index.js';

export interface WitnessProgress {
  verifiedPosition: number;
  witnessedSize: number;
  checkpointsWitnessed: number;
  /** Set when this pass refused the site. */
  refused?: { kind: string; position: number; reason: string };
}

interface WitnessRow {
  origin: string | null;
  verified_position: number;
  verified_hash: Buffer | null;
  witnessed_size: number;
  checkpoints_witnessed: number;
}

const page = 2_000;

export class SiteWitness {
  #accumulator = new MerkleAccumulator();
  #loaded = false;

  constructor(
    private readonly pool: pg.Pool,
    readonly site: string,
    private readonly verifierKey: string,
    private readonly witnessSignerKey: string | null,
  ) {}

  async #state(): Promise<WitnessRow> {
    return (await this.pool.query<WitnessRow>('SELECT origin, verified_position, verified_hash, witnessed_size, checkpoints_witnessed FROM fleet_site_witness WHERE site = $1', [this.site])).rows[0]!;
  }

  async #refuse(kind: string, position: number, detail: Record<string, unknown>): Promise<void> {
    await this.pool.query('SELECT fleet_refuse($1, $2, $3, $4)', [this.site, kind, position, JSON.stringify(detail)]);
  }

  /** Whether the site has been refused (by a trigger or by this witness). */
  async refused(): Promise<boolean> {
    return ((await this.pool.query('SELECT 1 FROM fleet_site_refusals WHERE site = $1 LIMIT 1', [this.site])).rowCount ?? 0) > 0;
  }

  /** Advances the Merkle accumulator to `size` over the hashes the centre holds (they were verified first). */
  async #advanceTo(size: number): Promise<void> {
    if (!this.#loaded) {
      this.#accumulator = new MerkleAccumulator();
      this.#loaded = true;
    }
    while (this.#accumulator.size < size) {
      const from = this.#accumulator.size + 1;
      const to = Math.min(size, from + 49_999);
      const { rows } = await this.pool.query<{ position: number; hash: Buffer }>('SELECT position, hash FROM ledger_events WHERE site = $1 AND position BETWEEN $2 AND $3 ORDER BY position', [this.site, from, to]);
      for (const row of rows) {
        if (Number(row.position) !== this.#accumulator.size + 1) throw new Error(`site ${this.site}: position ${this.#accumulator.size + 1} is missing below the verified prefix`);
        this.#accumulator.add(leafHash(row.hash));
      }
      if (rows.length === 0) throw new Error(`site ${this.site}: no rows from ${from} to ${to} below the verified prefix`);
    }
  }

  /** One pass: verifies what arrived since the last, as far as it goes. */
  async pass(): Promise<WitnessProgress> {
    const state = await this.#state();
    let verified = Number(state.verified_position);
    let verifiedHash = state.verified_hash ? state.verified_hash.toString('hex') : genesisHash;
    let witnessedSize = Number(state.witnessed_size);
    let witnessed = Number(state.checkpoints_witnessed);
    let origin = state.origin;
    if (await this.refused()) return { verifiedPosition: verified, witnessedSize, checkpointsWitnessed: witnessed };

    // The chain and the hashes, in position order, page by page.
    for (;;) {
      const { rows } = await this.pool.query('SELECT * FROM ledger_events WHERE site = $1 AND position > $2 ORDER BY position LIMIT $3', [this.site, verified, page]);
      let advanced = false;
      for (const row of rows) {
        const position = Number(row.position);
        if (position !== verified + 1) break; // not there yet (or refused: the trigger recorded why)
        const prev = (row.prev_hash as Buffer).toString('hex');
        const hash = (row.hash as Buffer).toString('hex');
        const expected = chainHash(prev, canonicalEvent({ position, eventId: row.event_id, stream: row.stream, streamVersion: row.stream_version, type: row.type, schemaVersion: row.schema_version, recordedAt: row.recorded_at, observedAt: row.observed_at, actor: row.actor, correlationId: row.correlation_id, causationId: row.causation_id, data: row.data }));
        if (prev !== verifiedHash || expected !== hash) {
          const reason = prev !== verifiedHash ? 'the row does not chain to the row before it' : "the row's hash is not what its content gives: it was altered";
          await this.#refuse('chain', position, { reason, held_prev_hash: verifiedHash, offered_prev_hash: prev, offered_hash: hash, computed_hash: expected });
          await this.#save(verified, verifiedHash, witnessedSize, witnessed, origin);
          return { verifiedPosition: verified, witnessedSize, checkpointsWitnessed: witnessed, refused: { kind: 'chain', position, reason } };
        }
        verified = position;
        verifiedHash = hash;
        advanced = true;
      }
      if (!advanced || rows.length < page) break;
    }

    // The checkpoints up to the verified prefix, in size order.
    const { rows: checkpoints } = await this.pool.query<{ size: number; root: Buffer; signed_note: string }>(
      'SELECT size, root, signed_note FROM ledger_checkpoints WHERE site = $1 AND size > $2 AND size <= $3 ORDER BY size',
      [this.site, witnessedSize, verified],
    );
    const cosigned: Array<{ size: number; root: Buffer; note: string }> = [];
    for (const checkpoint of checkpoints) {
      const size = Number(checkpoint.size);
      let refusal: string | null = null;
      let opened: ReturnType<typeof openCheckpoint> | null = null;
      try {
        opened = openCheckpoint(checkpoint.signed_note, this.verifierKey);
      } catch (error) {
        refusal = `the checkpoint is not signed by the site's key: ${error instanceof Error ? error.message : String(error)}`;
      }
      if (opened && !refusal) {
        if (opened.size !== size || !opened.root.equals(checkpoint.root)) refusal = 'the signed note says another size or root than its row';
        else if (origin !== null && opened.origin !== origin) refusal = `the checkpoint names another log (${opened.origin}, the site's is ${origin})`;
      }
      if (!refusal) {
        await this.#advanceTo(size);
        const root = this.#accumulator.root();
        if (!root.equals(checkpoint.root)) refusal = `the checkpoint's root is not the Merkle root of the ${size} rows the centre holds (${root.toString('hex')}): the site's log was rewritten`;
      }
      if (refusal) {
        await this.#refuse('checkpoint-invalid', size, { reason: refusal, offered_root: checkpoint.root.toString('hex'), offered_note: checkpoint.signed_note });
        await this.#save(verified, verifiedHash, witnessedSize, witnessed, origin);
        return { verifiedPosition: verified, witnessedSize, checkpointsWitnessed: witnessed, refused: { kind: 'checkpoint-invalid', position: size, reason: refusal } };
      }
      origin ??= opened!.origin;
      witnessedSize = size;
      witnessed += 1;
      cosigned.push({ size, root: checkpoint.root, note: this.witnessSignerKey ? addSignatures(checkpoint.signed_note, [this.witnessSignerKey]) : checkpoint.signed_note });
    }
    if (cosigned.length > 0) {
      await this.pool.query(
        `INSERT INTO fleet_site_cosigned (site, size, root, cosigned_note)
         SELECT $1, c.size, decode(c.root, 'hex'), c.note FROM json_to_recordset($2::json) AS c(size bigint, root text, note text)
         ON CONFLICT DO NOTHING`,
        [this.site, JSON.stringify(cosigned.map((c) => ({ size: c.size, root: c.root.toString('hex'), note: c.note })))],
      );
    }
    await this.#save(verified, verifiedHash, witnessedSize, witnessed, origin);
    return { verifiedPosition: verified, witnessedSize, checkpointsWitnessed: witnessed };
  }

  async #save(verified: number, verifiedHash: string, witnessedSize: number, witnessed: number, origin: string | null): Promise<void> {
    await this.pool.query(
      `UPDATE fleet_site_witness SET verified_position = $2, verified_hash = $3, witnessed_size = $4, checkpoints_witnessed = $5, origin = $6,
              witnessed_at = CASE WHEN witnessed_size <> $4 THEN clock_timestamp() ELSE witnessed_at END,
              witnessed_root = CASE WHEN witnessed_size <> $4 THEN (SELECT root FROM ledger_checkpoints WHERE site = $1 AND size = $4) ELSE witnessed_root END
        WHERE site = $1`,
      [this.site, verified, verified === 0 ? null : Buffer.from(verifiedHash, 'hex'), witnessedSize, witnessed, origin],
    );
  }
}
