import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The layer lint as a specification: each probe is a source placed (by its `filePath`, never written to disk) inside a
 * folder, importing across a floor or around a folder's surface; `npm run lint` must refuse every one, and must accept
 * the imports the layering allows.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));

let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({ cwd: root });
});

async function refusals(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: `${root}${file}` });
  return (result?.messages ?? []).filter((message) => message.severity === 2).map((message) => `${message.ruleId}: ${message.message}`);
}

const acrossAFloor: Array<[string, string, string]> = [
  ['the drivers never import the poller', 'src/drivers/redfish/probe.ts', "export const poller = await import('../../poller/index.js');"],
  ['the drivers never import the API', 'src/drivers/probe.ts', "import { buildApi } from '../api/index.js';\nexport { buildApi };"],
  ['the ledger never imports the sagas', 'src/ledger/probe.ts', "export * from '../../sagas/index.js';"],
  ['the ledger never imports replay', 'src/ledger/migrations/probe.ts', "import { historyMigrations } from '../../../replay/history/index.js';\nexport { historyMigrations };"],
  ['events never import the projections', 'events/probe.ts', "import type { Projection } from '../projections/index.js';\nexport type P = Projection;"],
  ['events never import the ledger', 'events/probe.ts', "export { EventStore } from '../src/ledger/index.js';"],
  ['the projections never import the API', 'projections/liveness/probe.ts', "import { buildApi } from '../../src/api/index.js';\nexport { buildApi };"],
  ['the sagas never import the API', 'sagas/engine/probe.ts', "import { buildApi } from '../../src/api/index.js';\nexport { buildApi };"],
  ['src/cluster is imported through its index only', 'src/api/probe.ts', "import { shardOf } from '../cluster/shards.js';\nexport { shardOf };"],
  ['sagas/engine is imported through the sagas index only', 'src/cli/commands/probe.ts', "import { evaluateGate } from '../../../sagas/engine/gate.js';\nexport { evaluateGate };"],
];

const allowed: Array<[string, string, string]> = [
  ['the poller uses the drivers through their surface', 'src/poller/probe.ts', "import { RedfishDriver } from '../drivers/index.js';\nexport { RedfishDriver };"],
  ['the sagas read the event catalogue', 'sagas/engine/probe.ts', "import { fleetCatalogue } from '../../events/index.js';\nexport { fleetCatalogue };"],
  ['the API uses src/cluster through its surface', 'src/api/probe.ts', "import * as cluster from '../cluster/index.js';\nexport { cluster };"],
  ['replay reads the ledger and the projections', 'replay/history/probe.ts', "export * from '../../src/ledger/index.js';\nexport * from '../../projections/index.js';"],
  ['a folder reaches inside itself', 'src/ledger/migrations/probe.ts', "export * from '../event-row.js';"],
  ['the CLI loads a command of its own lazily', 'src/cli/probe.ts', "export const load = () => import('./commands/query.js');"],
];

const tableReads: Array<[string, string, string]> = [
  ['the API reads liveness through the liveness queries', 'src/api/routes/probe.ts', "import { sql } from 'kysely';\nexport const q = sql`SELECT count(*) FROM liveness_nodes WHERE state = 'dark'`;"],
  ['the sagas read alarms through the alarms queries', 'sagas/engine/probe.ts', "export const q = (db: any) => db.selectFrom('alarms').selectAll();"],
];

describe('the layer lint', () => {
  it.each(acrossAFloor)('refuses an import across a floor: %s', async (_rule, file, source) => {
    const found = await refusals(file, source);
    expect(found, `${file}: ${source}`).toEqual([expect.stringMatching(/^layers\/floors: /)]);
  });

  it.each(tableReads)('refuses SQL on a projection table outside projections/: %s', async (_rule, file, source) => {
    expect(await refusals(file, source), `${file}: ${source}`).toEqual([expect.stringMatching(/^layers\/projection-tables: /)]);
  });

  it('accepts SQL on a projection table inside its projection', async () => {
    expect(await refusals('projections/liveness/probe.ts', "import { sql } from 'kysely';\nexport const q = sql`SELECT count(*) FROM liveness_nodes`;")).toEqual([]);
  });

  it.each(allowed)('accepts an import the layering allows: %s', async (_rule, file, source) => {
    expect(await refusals(file, source), `${file}: ${source}`).toEqual([]);
  });
});
