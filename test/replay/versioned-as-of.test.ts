import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../events/index.js';
import { darkNodes, driftFindings, fleetProjections, inventoryBy, openAlarms, versionedReadModels } from '../../projections/index.js';
import { versionColumns, versionsTableName } from '../../projections/support/versions.js';
import { AsOfEngine, type AsOfPoint } from '../../replay/as-of/index.js';
import { ProjectionRunner, type EventStore } from '../../src/ledger/index.js';
import { backends } from '../support/backends.js';
import { polls, registered } from '../projections/support/fleet-events.js';
import { caughtUp, openHarness, type Harness } from '../projections/support/projection-harness.js';
import { command, toAppends } from '../projections/support/random-fleet-log.js';

/**
 * Versioned read models are a projection of the log: what they show as of any position P is exactly what folding the
 * log from position 1 to P gives (the present-tense tables of a fresh run over those events), for every versioned
 * table (its key and versioned columns) and for the questions time travel answers. The live run applies the log in
 * random batches, so a row that changes several times inside one batch must still have a version per change.
 */
const backend = backends().find((b) => b.name === 'server' && b.adminUrl) ?? backends()[0]!;
// Low thresholds so that short random histories reach darkness, recovery and alarms opened and closed.
const options = { liveness: { darkAfterMisses: 3, recoverAfterSuccesses: 2 }, blastRadius: { minNodes: 2 } };
const specs = Object.values(versionedReadModels).flat();

type Answer = { tables: Record<string, string[]>; questions: Record<string, unknown> };

/** Every versioned table (key and versioned columns, rows sorted) and the four questions, read through `db`. */
async function answerOf(db: Kysely<any>, asOf: boolean): Promise<Answer> {
  const tables: Record<string, string[]> = {};
  for (const spec of specs) {
    const rows = await db.selectFrom(spec.name).select(versionColumns(spec)).execute();
    tables[spec.name] = rows.map((row) => JSON.stringify(row)).sort();
  }
  // The present-tense tables also carry the per-poll columns history does not keep: the as-of answer leaves them out.
  const dark = (await darkNodes(db)).map(({ lastContactAt: _contact, consecutiveMisses: _misses, ...kept }) => kept);
  if (asOf) for (const node of await darkNodes(db)) expect(node).not.toHaveProperty('lastContactAt');
  const questions = { dark, alarms: await openAlarms(db, { includeFolded: true }), vendors: await inventoryBy(db, 'manufacturer'), firmware: await inventoryBy(db, 'bmc_firmware'), drift: await driftFindings(db) };
  return { tables, questions };
}

/** The read models as of `position` by definition: fresh projections fold the log's events 1..position in a scratch schema. */
async function foldTo(harness: Harness, events: readonly RecordedEvent[], position: number): Promise<Answer> {
  const schema = `fold_${position}`;
  const db = harness.db;
  await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(db);
  try {
    for (const projection of fleetProjections(options)) {
      await projection.createTables(db.withSchema(schema));
      const mine = events.filter((event) => event.position <= position && projection.eventTypes.includes(event.type));
      if (mine.length > 0) await db.transaction().execute((trx) => projection.apply(trx.withSchema(schema), mine));
    }
    return await answerOf(db.withSchema(schema), false);
  } finally {
    await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(db);
  }
}

async function allEvents(store: EventStore): Promise<RecordedEvent[]> {
  return store.readAll({ fromPosition: 1, limit: 100_000 });
}

/** Positions to check: all of a short log, else the first, the last and a spread between them. */
function positionsToCheck(head: number, pick: readonly number[]): number[] {
  if (head <= 16) return Array.from({ length: head }, (_, i) => i + 1);
  return [...new Set([1, head, ...pick.map((p) => 1 + (p % head))])].sort((a, b) => a - b);
}

describe.skipIf(!backend.adminUrl)('versioned read models: the fleet as of any position is the log folded from position 1 to it', () => {
  it('for random logs applied live in random batches, every versioned table and every as-of question at and between events equals the fold of the log up to that point', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: 4, maxLength: 24 }),
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.nat(), { minLength: 10, maxLength: 10 }),
        async (commands, batchSize, pick) => {
          const harness = await openHarness(backend.adminUrl!);
          const runner = new ProjectionRunner(harness.store, fleetProjections(options), { batchSize });
          const engine = new AsOfEngine(harness.store);
          try {
            await runner.start();
            // Some appends carry several events (one position each, one recording instant for all).
            for (const [stream, events] of toAppends(commands)) await harness.store.append(stream, events);
            await caughtUp(harness.store, runner);
            await runner.stop();
            await engine.start();
            const events = await allEvents(harness.store);
            const head = events[events.length - 1]!.position;
            for (const position of positionsToCheck(head, pick)) {
              const expected = await foldTo(harness, events, position);
              const event = events[position - 1]!;
              const at: AsOfPoint = { position, recordedAt: event.recordedAt, instant: event.recordedAt };
              expect({ position, ...(await engine.read(at, Object.keys(versionedReadModels), (view) => answerOf(view, true))) }).toEqual({ position, ...expected });
              // The instant of the event, and an instant between it and the next one, stand for this position.
              const next = events[position];
              const instants = [event.recordedAt, ...(next && next.recordedAt.getTime() - event.recordedAt.getTime() > 1 ? [new Date((event.recordedAt.getTime() + next.recordedAt.getTime()) / 2)] : [])];
              for (const instant of instants) {
                const point = await engine.resolvePoint({ instant });
                expect(point.position).toBe(events.findLast((e) => e.recordedAt.getTime() <= instant.getTime())!.position);
                if (point.position !== position) continue;
                expect(await engine.read(point, Object.keys(versionedReadModels), (view) => answerOf(view, true))).toEqual(expected);
              }
            }
          } finally {
            await engine.stop();
            await runner.stop();
            await harness.close();
          }
        },
      ),
      { numRuns: 5 },
    );
  }, 600_000);

  it('a row that changes at several events of one batch has one version per change, each valid from its own event', async () => {
    const harness = await openHarness(backend.adminUrl!);
    try {
      // One batch: registration, three misses after a contact (dark at the third), then two contacts (healthy again).
      await harness.store.append('node-b1', [registered('b1', 'r1')]);
      const outcomes = ['success', 'timeout', 'timeout', 'timeout', 'success', 'success'] as const;
      await harness.store.append('polls-dc1', outcomes.map((outcome, minute) => polls((minute + 1) * 60, [['b1', outcome]])));
      const runner = new ProjectionRunner(harness.store, fleetProjections(options), { batchSize: 100 });
      await runner.start();
      await caughtUp(harness.store, runner);
      await runner.stop();
      const versions = await harness.db
        .selectFrom(versionsTableName(versionedReadModels.liveness![0]!))
        .select(['state', 'valid_from', 'valid_to'])
        .orderBy('valid_from')
        .execute();
      // Positions: 1 registration, 2..7 the polls. A miss opens a gap (late), the third makes it dark, a contact closes
      // the gap (still dark: hysteresis), the second brings it back.
      expect(versions).toEqual([
        { state: 'never-contacted', valid_from: 1, valid_to: 2 },
        { state: 'healthy', valid_from: 2, valid_to: 3 },
        { state: 'late', valid_from: 3, valid_to: 5 },
        { state: 'dark', valid_from: 5, valid_to: 6 },
        { state: 'dark', valid_from: 6, valid_to: 7 },
        { state: 'healthy', valid_from: 7, valid_to: null },
      ]);
    } finally {
      await harness.close();
    }
  }, 60_000);

  it('a projection killed (SIGKILL) in the middle of a batch leaves no version of it: the next run writes every version once', async () => {
    const harness = await openHarness(backend.adminUrl!);
    try {
      await harness.store.append('node-k1', [registered('k1', 'r1')]);
      await harness.store.append('node-k2', [registered('k2', 'r1')]);
      const outcomes = ['success', 'timeout', 'timeout', 'timeout', 'success'] as const;
      await harness.store.append('polls-dc1', outcomes.map((outcome, minute) => polls((minute + 1) * 60, [['k1', outcome], ['k2', 'success']])));
      const runner = new ProjectionRunner(harness.store, fleetProjections(options), { batchSize: 100 });
      await runner.start();
      await caughtUp(harness.store, runner);
      await runner.stop();
      const table = versionsTableName(versionedReadModels.liveness![0]!);
      const committed = await harness.db.selectFrom(table).selectAll().orderBy('node_id').orderBy('valid_from').execute();
      // More of the log, then a process that applies it to the live tables and is killed before its transaction commits.
      await harness.store.append('polls-dc1', [polls(7 * 60, [['k1', 'timeout'], ['k2', 'timeout']]), polls(8 * 60, [['k1', 'timeout'], ['k2', 'timeout']])]);
      const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./support/versioned-apply-child.ts', import.meta.url)), harness.store.connectionString], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      await new Promise<void>((resolve, reject) => {
        let stdout = '';
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          if (stdout.includes('applied')) resolve();
        });
        child.on('exit', (code) => reject(new Error(`the child exited (${code}) before applying: ${stderr}`)));
      });
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      expect(await harness.db.selectFrom(table).selectAll().orderBy('node_id').orderBy('valid_from').execute()).toEqual(committed);
      // The runner picks up where the checkpoint says: the versions are those of one clean pass over the whole log.
      const again = new ProjectionRunner(harness.store, fleetProjections(options), { batchSize: 100 });
      await again.start();
      await caughtUp(harness.store, again);
      await again.stop();
      const after = await harness.db.selectFrom(table).select(['node_id', 'state', 'valid_from', 'valid_to']).orderBy('node_id').orderBy('valid_from').execute();
      expect(after.filter((v) => v.node_id === 'k2').map((v) => [v.state, v.valid_from, v.valid_to])).toEqual([
        ['never-contacted', 2, 3],
        ['healthy', 3, 8],
        ['late', 8, null],
      ]);
      const fresh = await openHarness(backend.adminUrl!);
      try {
        for (const event of await allEvents(harness.store)) await fresh.store.append(event.stream, [{ type: event.type, data: event.data, actor: event.actor, ...(event.observedAt ? { observedAt: event.observedAt.toISOString() } : {}) } as never]);
        const clean = new ProjectionRunner(fresh.store, fleetProjections(options), { batchSize: 1 });
        await clean.start();
        await caughtUp(fresh.store, clean);
        await clean.stop();
        const cleanVersions = await fresh.db.selectFrom(table).select(['node_id', 'state', 'valid_from', 'valid_to']).orderBy('node_id').orderBy('valid_from').execute();
        expect(after).toEqual(cleanVersions);
      } finally {
        await fresh.close();
      }
    } finally {
      await harness.close();
    }
  }, 120_000);
});
