/**
 * The layer rules: what each folder may import. ESLint parses TypeScript through Babel's parser here, because
 * typescript-eslint needs the TypeScript compiler's JavaScript API, which TypeScript 7 (our type checker) no longer
 * ships; these rules need only the import statements, which Babel reads exactly.
 *
 * - `events/` and the pure domain files (evolve, facts, decide, version ordering) import no I/O: no `pg`,
 *   `kysely`, `fastify`, `undici`, `pino` and no `node:*` module, so replay is deterministic and they run anywhere.
 * - `projections/` never import `src/drivers`: read models work from events, not from how a BMC was read.
 * - `src/ledger` never imports `projections/`: the store knows nothing of its readers.
 * - Code outside a folder imports only that folder's `index.ts` (its public surface) for the folders below.
 */
import babelParser from '@babel/eslint-parser';

const io = ['pg', 'kysely', 'fastify', 'undici', 'pino'];
const ioMessage = 'pure domain code (events, evolve, facts, decide) does no I/O: pass values in, keep I/O at the edges';

const surfaces = ['src/ledger', 'src/drivers', 'src/sim', 'src/poller', 'src/api', 'src/firmware', 'src/kurrent', 'projections'];

/**
 * Deep imports into a folder from outside it: a path through `<name>/` to anything but its index. Matched on the
 * folder's last segment (`../ledger/x.js` from `src/poller`, `../../src/ledger/x.js` from `projections/`); inside
 * the folder, relative imports never name the folder itself.
 */
const surfaceOf = (folder) => {
  const name = folder.split('/').pop();
  return { group: [`**/${name}/**`, `!**/${name}/index.js`, `!**/${name}/index.ts`], message: `import ${folder}/ through its index.ts (its public surface)` };
};

const surfaceRules = (own) => surfaces.filter((folder) => folder !== own).map(surfaceOf);

const restrict = (patterns, paths = []) => ['error', { paths, patterns }];

export default [
  { ignores: ['node_modules/**', '.fleet-ledger/**', 'test-artifacts/**', 'coverage/**', 'src/api/dashboard/**'] },
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
  // Code outside each folder uses its surface (tests and benchmarks may reach inside: they test the parts).
  ...['src/cli', 'src/demo', 'src/ebom', 'src/logger.ts', 'events', ...surfaces, 'sagas', 'replay'].map((own) => ({
    files: own.endsWith('.ts') ? [own] : [`${own}/**/*.ts`],
    rules: { 'no-restricted-imports': restrict(surfaceRules(own)) },
  })),
  {
    files: ['projections/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict([
        ...surfaceRules('projections'),
        { group: ['**/src/drivers', '**/src/drivers/**'], message: 'projections work from events, never from the drivers' },
      ]),
    },
  },
  {
    files: ['src/ledger/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict([
        ...surfaceRules('src/ledger'),
        { group: ['**/projections', '**/projections/**'], message: 'the ledger knows nothing of the projections that read it' },
      ]),
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
    ],
    rules: {
      'no-restricted-imports': restrict(
        [
          ...surfaceRules('projections'),
          { group: ['node:*'], message: ioMessage },
          { group: ['**/src/drivers', '**/src/drivers/**'], message: 'pure domain code does not depend on the drivers' },
        ],
        io.map((name) => ({ name, message: ioMessage })),
      ),
    },
  },
];
