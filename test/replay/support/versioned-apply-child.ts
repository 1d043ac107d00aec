/**
 * A projection process killed in the middle of a batch: it applies the events past the liveness checkpoint to the live
 * tables inside one transaction (rows and versions written, not committed), announces `applied` and never commits.
 * The test kills this process with SIGKILL at that moment.
 */
import { LivenessProjection } from '../../../projections/index.js';
import { EventStore } from '../../../src/ledger/index.js';

const [url] = process.argv.slice(2);
if (!url) throw new Error('usage: versioned-apply-child <database-url>');
const store = await EventStore.open({ connectionString: url, migrate: false });
const projection = new LivenessProjection({ darkAfterMisses: 3, recoverAfterSuccesses: 2 });
const checkpoint = await store.db.selectFrom('projection_checkpoints').select('position').where('name', '=', projection.name).executeTakeFirstOrThrow();
const events = (await store.readAll({ fromPosition: Number(checkpoint.position) + 1, limit: 10_000 })).filter((event) => (projection.eventTypes as readonly string[]).includes(event.type));
await store.db.transaction().execute(async (trx) => {
  await projection.apply(trx as never, events);
  process.stdout.write('applied\n');
  await new Promise<never>(() => undefined);
});
