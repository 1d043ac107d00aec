/**
 * The layer rules: what each folder may import. ESLint parses TypeScript through Babel's parser here, because
 * typescript-eslint needs the TypeScript compiler's JavaScript API, which TypeScript 7 (our type checker) no longer
 * ships; these rules need only the import statements, which Babel reads exactly.
 *
 * - Floors (`layers/floors`): every product folder stands on a floor and imports only from its own floor or below.
 *   Nothing imports upward, so the store never depends on who reads it and the domain never on who serves it.
 * - Surfaces (`layers/floors` too): code outside a folder imports only that folder's `index.ts` (its public surface).
 * - `events/` and the pure domain files (evolve, facts, decide, version ordering) import no I/O: no `pg`,
 *   `kysely`, `fastify`, `undici`, `pino` and no `node:*` module, so replay is deterministic and they run anywhere.
 * - Projection read models are read only through each projection's query module: SQL naming a projection table is
 *   refused outside `projections/` (`layers/projection-tables`).
 *
 * Tests and benchmarks are outside the floors: they may reach inside a folder (they test its parts).
 * `test/lint/layer-rules.unit.test.ts` holds ten imports across a floor that must each be refused.
 */
import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import babelParser from '@babel/eslint-parser';

const root = dirname(fileURLToPath(import.meta.url));

const io = ['pg', 'kysely', 'fastify', 'undici', 'pino'];
const ioMessage = 'pure domain code (events, evolve, facts, decide) does no I/O: pass values in, keep I/O at the edges';

/**
 * The floors, bottom first. A folder (or a single file, for the small process utilities) may import its own floor and
 * the floors below it. Where a folder stands, and why:
 * 0. `events`, `src/firmware`: the vocabulary (event schemas, firmware version rules). Pure; they import nothing of ours.
 * 1. `src/drivers`, `src/ledger`: the two edges (BMCs, the store), written against the vocabulary only.
 *    `src/sim` stands here too: it serves BMCs from vendor profiles and imports nothing of ours; the API, the CLI
 *    and the demo drive it, the drivers never depend on it. `src/logger.ts` (with `src/log-format.ts`),
 *    `src/thread.ts` and `src/within.ts` are process utilities that import only `pino` and `node:*`: anything from
 *    the edges up may use them. `src/credentials` (the versioned credential store a secret manager can stand in for)
 *    is an edge too: it imports only `node:*`.
 * 2. `projections`, `src/poller`, `sagas`, `replay/*`: what runs on the log and the drivers. `src/ebom` stands here:
 *    it imports `events` and `src/ledger` (it appends the declared bill of materials) and the API and CLI import it.
 * 3. `src/api`, `src/kurrent`, `src/cluster`, `src/cli`: the doors and the process around them. `src/demo` stands
 *    here: it imports `src/poller`, `src/ebom` and `src/sim` (floor 2 and below) to assemble a demo fleet, and only
 *    `start` uses it.
 */
const floors = [
  ['events', 'src/firmware'],
  ['src/drivers', 'src/ledger', 'src/sim', 'src/credentials', 'src/logger.ts', 'src/log-format.ts', 'src/thread.ts', 'src/within.ts'],
  ['projections', 'src/poller', 'sagas', 'replay/as-of', 'replay/audit', 'replay/history', 'replay/checkpoint', 'replay/merkle', 'src/ebom'],
  ['src/api', 'src/kurrent', 'src/cluster', 'src/cli', 'src/demo', 'src/federation'],
];
const floorOf = new Map(floors.flatMap((units, floor) => units.map((unit) => [unit, floor])));

/** The folder (or single file) a repository path belongs to, or undefined outside the floors (tests, bench, docs). */
function unitOf(path) {
  const parts = path.replace(/\.js$/, '.ts').split(sep);
  for (let length = Math.min(parts.length, 2); length >= 1; length -= 1) {
    const unit = parts.slice(0, length).join('/');
    if (floorOf.has(unit)) return unit;
  }
  return undefined;
}

const isSurface = (path, unit) => unit.endsWith('.ts') || /^index\.(js|ts)$/.test(path.split(sep).join('/').slice(unit.length + 1));

const floorsRule = {
  meta: {
    type: 'problem',
    docs: { description: 'imports go to the own floor or below, and into another folder only through its index.ts' },
    schema: [],
    messages: {
      upward: "{{from}} (floor {{fromFloor}}) imports {{to}} (floor {{toFloor}}): nothing imports upward; move what is needed down, or let the caller pass it in",
      surface: 'import {{to}} through its index.ts (its public surface), not {{path}}',
    },
  },
  create(context) {
    const file = relative(root, context.filename);
    const from = unitOf(file);
    if (from === undefined) return {};
    const check = (node) => {
      const source = node.source;
      if (!source || source.type !== 'Literal' || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = relative(root, resolve(dirname(context.filename), source.value));
      const to = unitOf(target);
      if (to === undefined || to === from) return;
      const fromFloor = floorOf.get(from);
      const toFloor = floorOf.get(to);
      if (toFloor > fromFloor) context.report({ node: source, messageId: 'upward', data: { from, fromFloor, to, toFloor } });
      else if (!isSurface(target, to)) context.report({ node: source, messageId: 'surface', data: { to, path: source.value } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

/**
 * The read models' tables. Outside `projections/` they are read through the query functions each projection
 * exports, so a table can change with its projection alone.
 */
const projectionTables = [
  'liveness_nodes', 'liveness_gaps', 'inventory_nodes', 'inventory_firmware', 'drift_nodes', 'drift_fields',
  'alarms', 'alarm_state', 'topology_racks', 'topology_nodes',
];
const tablePattern = new RegExp(`\\b(?:from|join)\\s+"?(${projectionTables.join('|')})"?\\b`, 'i');

const projectionTablesRule = {
  meta: {
    type: 'problem',
    docs: { description: "projection tables are read only through the projection's query module" },
    schema: [],
    messages: { read: "{{table}} is a projection's read model: read it through the query functions its projection exports" },
  },
  create(context) {
    const report = (node, table) => context.report({ node, messageId: 'read', data: { table } });
    const kyselyReads = new Set(['selectFrom', 'innerJoin', 'leftJoin', 'rightJoin', 'fullJoin']);
    return {
      TemplateLiteral(node) {
        const text = node.quasis.map((quasi) => quasi.value.cooked ?? quasi.value.raw).join(' ');
        const match = tablePattern.exec(text);
        if (match) report(node, match[1]);
      },
      CallExpression(node) {
        const callee = node.callee;
        if (callee.type !== 'MemberExpression' || callee.property.type !== 'Identifier' || !kyselyReads.has(callee.property.name)) return;
        const first = node.arguments[0];
        if (first?.type !== 'Literal' || typeof first.value !== 'string') return;
        const table = first.value.split(/\s+as\s+/i)[0].trim();
        if (projectionTables.includes(table)) report(first, table);
      },
    };
  },
};

const layers = { rules: { floors: floorsRule, 'projection-tables': projectionTablesRule } };

const restrict = (patterns, paths = []) => ['error', { paths, patterns }];

export default [
  { ignores: ['node_modules/**', 'dist/**', '.fleet-ledger/**', 'test-artifacts/**', 'coverage/**', 'src/api/dashboard/**', 'test/kurrent-client-suite/upstream/**'] },
  {
    files: ['**/*.ts', '**/*.js'],
    languageOptions: {
      parser: babelParser,
      parserOptions: {
        requireConfigFile: false,
        babelOptions: { babelrc: false, configFile: false, presets: [['@babel/preset-typescript', { allowDeclareFields: true }]] },
      },
    },
  },
  {
    files: ['events/**/*.ts', 'src/**/*.ts', 'projections/**/*.ts', 'sagas/**/*.ts', 'replay/**/*.ts'],
    plugins: { layers },
    rules: { 'layers/floors': 'error' },
  },
  {
    files: ['events/**/*.ts', 'src/**/*.ts', 'sagas/**/*.ts', 'replay/**/*.ts'],
    plugins: { layers },
    rules: { 'layers/projection-tables': 'error' },
  },
  {
    files: ['projections/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict([{ group: ['**/src/drivers', '**/src/drivers/**'], message: 'projections work from events, never from the drivers' }]),
    },
  },
  {
    files: [
      'events/**/*.ts',
      'projections/**/*-evolve.ts',
      'projections/**/*-facts.ts',
      'projections/compliance/version-order.ts',
      'projections/drift/firmware-comparator.ts',
      'src/firmware/**/*.ts',
      'sagas/**/*-decide.ts',
      'sagas/**/*-evolve.ts',
      'sagas/**/*-planner.ts',
      'sagas/saga-event.ts',
      'sagas/decider.ts',
    ],
    rules: {
      'no-restricted-imports': restrict(
        [
          { group: ['node:*'], message: ioMessage },
          { group: ['**/src/drivers', '**/src/drivers/**'], message: 'pure domain code does not depend on the drivers' },
        ],
        io.map((name) => ({ name, message: ioMessage })),
      ),
    },
  },
];
