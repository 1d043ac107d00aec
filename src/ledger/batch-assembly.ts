/**
 * Chaining a group commit's batch onto what it is written after: each append's replay check (given event ids already
 * stored), lease epochs and expected version, then its rows' positions, stream versions and hashes, in batch order.
 * Pure: the basis comes in (read under the append lock, or as this process last left the log), the rows go out.
 */
import type { RecordedEvent } from '../../events/index.js';
import type { AppendResult, ExpectedVersion } from './append-types.js';
import { chainHashBytes } from './canonical-json.js';
import { LedgerError } from './ledger-error.js';
import { chainText, contentDigest, type PreparedEvent } from './prepare-append.js';
import { emptyColumns, type WriteColumns } from './write-statement.js';

export interface PendingAppend {
  stream: string;
  events: PreparedEvent[];
  expected: ExpectedVersion;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
  /** Aborted when the caller gave up: the append is dropped if its batch has not begun (`AppendOptions.signal`). */
  signal?: AbortSignal;
}

export type Settled = Array<{ ok: true; result: AppendResult } | { ok: false; error: unknown }>;

/** What a batch is chained onto: read under the append lock, or (one round trip) as this process last left it. */
export interface BatchBasis {
  position: number;
  hash: Buffer;
  recordedAt: Date;
  versions: Map<string, number>;
  known: Map<string, StoredIdentity>;
  leases: Map<string, { epoch: number; owner: string | null; released: boolean }>;
  sagaLeases: Map<string, { epoch: number; owner: string }>;
}

/** A batch chained onto its basis: the rows to write, the streams' new versions, each append's outcome, the new head. */
export interface Assembled {
  columns: WriteColumns;
  touched: Map<string, { version: number; lastPosition: number }>;
  settled: Settled;
  position: number;
  hash: Buffer;
}

export function leaseOf(event: PreparedEvent): unknown {
  return 'lease' in event.actor ? event.actor.lease : undefined;
}

export interface StoredIdentity {
  stream: string;
  position: number;
  streamVersion: number;
  /** The stored content's digest, or the event an earlier append of this batch writes (its digest asked only if needed). */
  content: string | PreparedEvent;
}

/** An already-stored event as the group-commit read returns it (JSON, not typed columns). */
export interface ExistingRow {
  event_id: string;
  stream: string;
  stream_version: number;
  position: number;
  type: string;
  schema_version: number;
  observed_at: string | null;
  actor: unknown;
  correlation_id: string | null;
  causation_id: string | null;
  data: unknown;
}

export function storedIdentity(row: ExistingRow): StoredIdentity {
  return {
    stream: row.stream,
    position: Number(row.position),
    streamVersion: row.stream_version,
    content: contentDigest(row.stream, {
      type: row.type,
      schemaVersion: row.schema_version,
      data: row.data,
      observedAt: row.observed_at === null ? null : new Date(row.observed_at),
      actor: row.actor as RecordedEvent['actor'],
      correlationId: row.correlation_id,
      causationId: row.causation_id,
    }),
  };
}

function expectedMatches(expected: ExpectedVersion, exists: boolean, version: number): boolean {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return !exists;
    case 'stream_exists':
      return exists;
    default:
      return version === expected;
  }
}

function describeExpected(expected: ExpectedVersion): string {
  return typeof expected === 'number' ? `version ${expected}` : expected;
}

/** Refuses an append written under a lease (poll shard or saga) whose epoch is no longer the one held. */
function refuseStaleEpochs(pending: PendingAppend, { leases, sagaLeases }: Pick<BatchBasis, 'leases' | 'sagaLeases'>): void {
  for (const event of pending.events) {
    if (event.actor.kind === 'saga' && event.actor.lease) {
      const stamp = event.actor.lease;
      const held = sagaLeases.get(stamp.saga);
      if (held?.epoch !== stamp.epoch) {
        throw new LedgerError(
          'LEDGER_STALE_EPOCH',
          { stream: pending.stream, saga: stamp.saga, epoch: stamp.epoch, currentEpoch: held?.epoch ?? null, owner: held?.owner ?? null },
          `append to ${pending.stream} refused: written under epoch ${stamp.epoch} of saga ${stamp.saga}, which is ${held ? `at epoch ${held.epoch} (taken by ${held.owner})` : 'not leased'}`,
        );
      }
    }
    const lease = (event.actor.kind === 'driver' || event.actor.kind === 'system') ? event.actor.lease : undefined;
    if (!lease) continue;
    const held = leases.get(lease.shard);
    if (!held || held.epoch !== lease.epoch || held.released) {
      throw new LedgerError(
        'LEDGER_STALE_EPOCH',
        { stream: pending.stream, shard: lease.shard, epoch: lease.epoch, currentEpoch: held?.epoch ?? null, owner: held?.owner ?? null },
        `append to ${pending.stream} refused: written under epoch ${lease.epoch} of shard ${lease.shard}, which is ${!held ? 'not leased' : held.released && held.epoch === lease.epoch ? 'released' : `at epoch ${held.epoch} (held by ${held.owner ?? 'nobody'})`}`,
      );
    }
  }
}

/**
 * Chains a batch onto `basis`: each append's replay check, lease epochs and expected version, then its rows'
 * positions, versions and hashes. An append that fails is settled with its error and writes nothing.
 */
export function assemble(batch: PendingAppend[], basis: BatchBasis): Assembled {
  const settled: Settled = [];
  const { versions, known } = basis;
  let position = basis.position;
  let prevHash = basis.hash;
  const columns = emptyColumns();
  columns.hashes.push(prevHash);
  const recordedAtJson = JSON.stringify(basis.recordedAt.toISOString());
  const touched = new Map<string, { version: number; lastPosition: number }>();
  for (const pending of batch) {
    try {
      const replay = replayOf(pending, known);
      if (replay) {
        settled.push({ ok: true, result: replay });
        continue;
      }
      refuseStaleEpochs(pending, basis);
      const exists = versions.has(pending.stream);
      const current = versions.get(pending.stream) ?? 0;
      if (!expectedMatches(pending.expected, exists, current)) {
        throw new LedgerError(
          'LEDGER_WRONG_EXPECTED_VERSION',
          { stream: pending.stream, expected: pending.expected, actual: exists ? current : -1 },
          `append to ${pending.stream} expected ${describeExpected(pending.expected)} but the stream is ${exists ? `at version ${current}` : 'absent'}`,
        );
      }
      let version = current;
      const positions: number[] = [];
      const streamJson = JSON.stringify(pending.stream);
      for (const event of pending.events) {
        position += 1;
        version += 1;
        const observedAt = event.observedAt === null ? null : event.observedAt.toISOString();
        // canonicalEvent's text, assembled from the parts prepared (and canonicalized) before the lock.
        const hash = chainHashBytes(prevHash, chainText(event, position, streamJson, version, recordedAtJson, observedAt === null ? 'null' : `"${observedAt}"`));
        columns.position.push(position);
        columns.eventId.push(event.eventId);
        columns.stream.push(pending.stream);
        columns.version.push(version);
        columns.type.push(event.type);
        columns.schemaVersion.push(event.schemaVersion);
        columns.observedAt.push(observedAt);
        columns.actor.push(event.canonicalActor);
        columns.correlationId.push(event.correlationId);
        columns.causationId.push(event.causationId);
        columns.data.push(event.canonicalData);
        columns.hashes.push(hash);
        // What a later append of this batch carrying the same id is answered from. Only a given id can come again: an
        // id the ledger made is new (UUIDv7), and no caller holds it before this append is answered.
        if (event.idGiven) known.set(event.eventId, { stream: pending.stream, position, streamVersion: version, content: event });
        positions.push(position);
        prevHash = hash;
      }
      versions.set(pending.stream, version);
      touched.set(pending.stream, { version, lastPosition: position });
      settled.push({ ok: true, result: { stream: pending.stream, nextExpectedVersion: version, positions, idempotentReplay: false } });
    } catch (error) {
      settled.push({ ok: false, error });
    }
  }
  return { columns, touched, settled, position, hash: prevHash };
}

/**
 * If this append's event ids are already stored with the same content in the same stream, the
 * original result; if only some are, or the content differs, an idempotency conflict; else null.
 */
function replayOf(pending: PendingAppend, known: Map<string, StoredIdentity>): AppendResult | null {
  // Only an id a caller gave can be stored already or earlier in the batch (see `assemble`); most appends give none.
  if (!pending.events.some((event) => event.idGiven)) return null;
  const matches = pending.events.map((event) => ({ event, stored: known.get(event.eventId) }));
  if (matches.every((m) => m.stored === undefined)) return null;
  for (const { event, stored } of matches) {
    const reason = !stored
      ? 'other events of this append were stored before without it'
      : stored.stream !== pending.stream
        ? `it is stored in stream ${stored.stream}`
        : (typeof stored.content === 'string' ? stored.content : stored.content.contentDigest) !== event.contentDigest
          ? 'it is stored with different content'
          : null;
    if (reason) {
      throw new LedgerError(
        'LEDGER_IDEMPOTENCY_CONFLICT',
        { stream: pending.stream, eventId: event.eventId, storedStream: stored?.stream ?? pending.stream, reason },
        `event ${event.eventId} cannot be appended to ${pending.stream}: ${reason}`,
      );
    }
  }
  const stored = matches.map((m) => m.stored!);
  return {
    stream: pending.stream,
    nextExpectedVersion: Math.max(...stored.map((s) => s.streamVersion)),
    positions: stored.map((s) => s.position),
    idempotentReplay: true,
  };
}
