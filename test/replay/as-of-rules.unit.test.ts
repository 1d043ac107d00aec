import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asOfErrorCatalogue, isAsOfError, parsePoint, snapshotsToPrune, type RetentionPolicy, type SnapshotSummary } from '../../replay/as-of/index.js';

const hour = 3_600_000;
const now = new Date('2026-12-08T12:00:00Z');

function snapshotAt(id: number, recordedAt: number): SnapshotSummary {
  return { id, schema: `as_of_snapshot_${id}`, takenAt: new Date(recordedAt), recordedAt: new Date(recordedAt), headPosition: id * 1000, seconds: 1, bytes: 1, origin: 'live', parts: [] };
}

describe('which snapshots are kept', () => {
  const policy: RetentionPolicy = { keepAllForMs: 24 * hour, olderSpacingMs: hour };

  it('every snapshot of the recent past is kept, older ones one an hour, and the newest always', () => {
    // Every 10 minutes for three days of log.
    const snapshots = Array.from({ length: 3 * 24 * 6 }, (_, i) => snapshotAt(i + 1, now.getTime() - 3 * 24 * hour + i * 10 * 60_000));
    const pruned = new Set(snapshotsToPrune(snapshots, policy, now).map((s) => s.id));
    const kept = snapshots.filter((s) => !pruned.has(s.id));
    const recent = snapshots.filter((s) => now.getTime() - s.recordedAt.getTime() < policy.keepAllForMs);
    expect(recent.every((s) => !pruned.has(s.id))).toBe(true);
    const older = kept.filter((s) => now.getTime() - s.recordedAt.getTime() >= policy.keepAllForMs);
    for (let i = 1; i < older.length; i += 1) expect(older[i]!.recordedAt.getTime() - older[i - 1]!.recordedAt.getTime()).toBeGreaterThanOrEqual(hour);
    expect(older).toHaveLength(49); // from 72 h ago to 24 h ago, both ends
  });

  it('for all snapshot histories: the newest is kept, no two kept old ones are closer than the spacing, and no gap between kept ones is wider than needed', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 5 * 24 * 60 }), { minLength: 1, maxLength: 200 }), (minutesAgo) => {
        const snapshots = minutesAgo.map((m, i) => snapshotAt(i + 1, now.getTime() - m * 60_000));
        const pruned = new Set(snapshotsToPrune(snapshots, policy, now).map((s) => s.id));
        const kept = snapshots.filter((s) => !pruned.has(s.id)).sort((a, b) => a.recordedAt.getTime() - b.recordedAt.getTime());
        const newest = [...snapshots].sort((a, b) => b.recordedAt.getTime() - a.recordedAt.getTime())[0]!;
        expect(pruned.has(newest.id)).toBe(false);
        const old = kept.filter((s) => s !== newest && now.getTime() - s.recordedAt.getTime() >= policy.keepAllForMs);
        for (let i = 1; i < old.length; i += 1) expect(old[i]!.recordedAt.getTime() - old[i - 1]!.recordedAt.getTime()).toBeGreaterThanOrEqual(hour);
        // Thinning never leaves an old snapshot without a kept one at most an hour before it (its tail is bounded).
        for (const dropped of snapshots.filter((s) => pruned.has(s.id))) {
          const before = kept.filter((s) => s.recordedAt.getTime() <= dropped.recordedAt.getTime());
          expect(before.length).toBeGreaterThan(0);
          expect(dropped.recordedAt.getTime() - before[before.length - 1]!.recordedAt.getTime()).toBeLessThan(hour);
        }
      }),
    );
  });

  it('for all histories of snapshots holding some projections each: every projection keeps its newest copy, and each dropped copy has a kept copy of the same projection less than the spacing before it', () => {
    const names = ['liveness', 'alarms', 'drift'];
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ minutesAgo: fc.integer({ min: 0, max: 5 * 24 * 60 }), holds: fc.subarray(names, { minLength: 1 }) }), { minLength: 1, maxLength: 150, selector: (s) => s.minutesAgo }),
        (history) => {
          const snapshots = history.map(({ minutesAgo, holds }, i) => ({ ...snapshotAt(i + 1, now.getTime() - minutesAgo * 60_000), parts: holds.map((projection) => ({ projection, version: 1, position: 1 })) }));
          const pruned = new Set(snapshotsToPrune(snapshots, policy, now).map((s) => s.id));
          for (const name of names) {
            const copies = snapshots.filter((s) => s.parts.some((part) => part.projection === name)).sort((a, b) => a.recordedAt.getTime() - b.recordedAt.getTime());
            if (copies.length === 0) continue;
            expect(pruned.has(copies[copies.length - 1]!.id)).toBe(false);
            const kept = copies.filter((s) => !pruned.has(s.id));
            for (const dropped of copies.filter((s) => pruned.has(s.id))) {
              const before = kept.filter((s) => s.recordedAt.getTime() <= dropped.recordedAt.getTime());
              expect(before.length).toBeGreaterThan(0);
              expect(dropped.recordedAt.getTime() - before[before.length - 1]!.recordedAt.getTime()).toBeLessThan(hour);
            }
          }
        },
      ),
    );
  });

  it('a spacing of 0 keeps everything', () => {
    const snapshots = [1, 2, 3].map((i) => snapshotAt(i, now.getTime() - i * 100 * hour));
    expect(snapshotsToPrune(snapshots, { keepAllForMs: 0, olderSpacingMs: 0 }, now)).toEqual([]);
  });
});

describe('an asOf as a caller writes it', () => {
  it('a whole number of 1 or more is a position; an RFC 3339 instant with seconds and a zone is an instant', () => {
    expect(parsePoint('1')).toEqual({ position: 1 });
    expect(parsePoint('2000100')).toEqual({ position: 2_000_100 });
    expect(parsePoint('2026-12-01T03:00:00Z')).toEqual({ instant: new Date('2026-12-01T03:00:00Z') });
    expect(parsePoint('2026-12-01T04:00:00.250+01:00')).toEqual({ instant: new Date('2026-12-01T03:00:00.250Z') });
  });

  it('anything else is ASOF_INVALID_POINT naming the value', () => {
    for (const value of ['', '0', '-3', '01', '1.5', '1e6', 'yesterday', '2026-12-01', '2026-12-01T03:00Z', '2026-12-01T03:00:00', '2026-02-30T00:00:00Z', '2026-12-01T24:00:00Z', '99999999999999999']) {
      try {
        parsePoint(value);
        throw new Error(`'${value}' was accepted`);
      } catch (error) {
        expect(isAsOfError(error) && error.code === 'ASOF_INVALID_POINT' && error.details.value === value).toBe(true);
      }
    }
  });

  it('every error code states whether asking again can succeed', () => {
    for (const [code, entry] of Object.entries(asOfErrorCatalogue)) {
      expect(typeof entry.retryable, code).toBe('boolean');
      expect(entry.meaning.length, code).toBeGreaterThan(10);
    }
  });
});
