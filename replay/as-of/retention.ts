/**
 * How many snapshots are kept: every snapshot of the recent past of the log (by the ledger time a snapshot stands for,
 * not when it was taken: a backfill takes many at once) (where most questions land), and older ones thinned
 * to one per `olderSpacingMs`, so storage grows with the ledger's age at a known rate instead of with every snapshot
 * ever taken. A question about the thinned past still gets an exact answer; only its tail is longer.
 */
import type { Kysely } from 'kysely';
import { dropSnapshot, type SnapshotSummary } from './snapshot-store.js';
import type { DynamicDatabase } from '../../src/ledger/index.js';

export interface RetentionPolicy {
  /** Every snapshot younger than this is kept (0: none is kept for its youth alone). */
  keepAllForMs: number;
  /** Older snapshots are kept one per this interval (0: all of them are kept). */
  olderSpacingMs: number;
}

/**
 * The snapshots a policy lets go (never the newest, whatever its age). Pure: `now` comes in. The policy holds for each
 * projection's own copies: a snapshot holds one projection or several (each is copied when it advanced far enough),
 * and it goes only when every projection it holds keeps a copy close enough without it. A snapshot's parts stand
 * for the moment of the snapshot (`recordedAt`: its lowest part).
 */
export function snapshotsToPrune(snapshots: readonly SnapshotSummary[], policy: RetentionPolicy, now: Date): SnapshotSummary[] {
  if (policy.olderSpacingMs <= 0 || snapshots.length <= 1) return [];
  const ordered = [...snapshots].sort((a, b) => a.recordedAt.getTime() - b.recordedAt.getTime() || a.id - b.id);
  const series = new Map<string, SnapshotSummary[]>();
  for (const snapshot of ordered) {
    const names = snapshot.parts.length === 0 ? [''] : snapshot.parts.map((part) => part.projection);
    for (const name of new Set(names)) series.set(name, [...(series.get(name) ?? []), snapshot]);
  }
  const kept = new Set<SnapshotSummary>();
  for (const copies of series.values()) {
    const newest = copies[copies.length - 1]!;
    let lastKept = Number.NEGATIVE_INFINITY;
    for (const snapshot of copies) {
      const at = snapshot.recordedAt.getTime();
      const recent = now.getTime() - at < policy.keepAllForMs;
      if (snapshot === newest || recent || at - lastKept >= policy.olderSpacingMs) {
        lastKept = at;
        kept.add(snapshot);
      }
    }
  }
  return ordered.filter((snapshot) => !kept.has(snapshot));
}

/** Drops what the policy lets go; returns what was dropped. */
export async function pruneSnapshots(db: Kysely<DynamicDatabase>, snapshots: readonly SnapshotSummary[], policy: RetentionPolicy, now: Date): Promise<SnapshotSummary[]> {
  const prune = snapshotsToPrune(snapshots, policy, now);
  for (const snapshot of prune) await dropSnapshot(db, snapshot);
  return prune;
}
