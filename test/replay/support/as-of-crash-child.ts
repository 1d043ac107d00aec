/**
 * An as-of engine killed in the middle of a materialization: it starts, asks for liveness as of a position, and the
 * liveness projection's `apply` (run on the view's tables, inside the materialization's transaction) announces
 * `applying <engine key>` and never returns. The test kills this process with SIGKILL at that moment.
 */
import type { Kysely, Transaction } from 'kysely';
import type { RecordedEvent } from '../../../events/index.js';
import { fleetProjections, type Projection } from '../../../projections/index.js';
import { AsOfEngine } from '../../../replay/as-of/index.js';
import { EventStore } from '../../../src/ledger/index.js';

const [url, position] = process.argv.slice(2);
if (!url || !position) throw new Error('usage: as-of-crash-child <database-url> <position>');

/** The projection, with an `apply` that hangs once it has written into the view. */
function hanging(projection: Projection, announce: () => void): Projection {
  return {
    name: projection.name,
    version: projection.version,
    eventTypes: projection.eventTypes,
    tables: projection.tables,
    createTables: (db: Kysely<any>) => projection.createTables(db),
    async apply(trx: Transaction<any>, events: readonly RecordedEvent[]) {
      await projection.apply(trx, events);
      announce();
      await new Promise<never>(() => undefined);
    },
  };
}

const store = await EventStore.open({ connectionString: url, migrate: false });
let engine: AsOfEngine | undefined;
const projections = fleetProjections({ liveness: { darkAfterMisses: 3 } }).map((projection) =>
  projection.name === 'liveness' ? hanging(projection, () => process.stdout.write(`applying ${engine!.engineKey}\n`)) : projection,
);
engine = new AsOfEngine(store, projections, { useSnapshots: false });
await engine.start({ snapshots: false });
await engine.read(await engine.resolve(position), ['liveness'], async () => undefined);
