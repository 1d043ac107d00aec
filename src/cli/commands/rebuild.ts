/**
 * `fleet-ledger rebuild [name|--all] [--to POSITION]`: rebuilds read models from zero (or up to a position) into
 * fresh tables and swaps them in, with a progress bar on stderr.
 */
import { fleetProjections } from '../../../projections/index.js';
import { openLedger, ProjectionRunner, type RebuildProgress } from '../../ledger/index.js';
import { parseCommand } from '../parse-command.js';

export const summary = 'rebuild one projection (or --all) from zero, optionally only up to --to POSITION';

const usage = `usage: fleet-ledger rebuild <name>|--all [--to POSITION] [--data-dir DIR]
                            [--page-events N] [--page-mb N] [--max-held-rows N]

  --page-events, --page-mb  the log is read in pages of at most this many events and megabytes (default 20000 and 64;
                            smaller pages use less memory and take longer)
  --max-held-rows           rows a projection's tables hold in memory through the rebuild before they are written to
                            its scratch tables and memory is emptied (default 500000; 0 writes after every page)

  projections: ${fleetProjections()
    .map((p) => p.name)
    .join(', ')}
  DATABASE_URL set: use that PostgreSQL server instead of the embedded one.
`;

function progressBar(progress: RebuildProgress): string {
  const share = progress.target === 0 ? 1 : Math.min(1, progress.position / progress.target);
  const width = 30;
  const filled = Math.round(share * width);
  return `\r${progress.name.padEnd(14)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}%  ${progress.position}/${progress.target}`;
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand(
    'rebuild',
    argv,
    { all: { type: 'boolean' }, to: { type: 'string' }, 'data-dir': { type: 'string' }, 'page-events': { type: 'string' }, 'page-mb': { type: 'string' }, 'max-held-rows': { type: 'string' } },
    usage,
    true,
    { 'data-dir': { kind: 'directory-if-present', what: 'data folder' } },
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const projections = fleetProjections();
  const names = values.all ? projections.map((p) => p.name) : positionals;
  if (names.length === 0 || (values.all && positionals.length > 0)) {
    process.stderr.write(usage);
    return 2;
  }
  const unknown = names.filter((name) => !projections.some((p) => p.name === name));
  if (unknown.length > 0) {
    process.stderr.write(`unknown projection(s): ${unknown.join(', ')}\n${usage}`);
    return 2;
  }
  const toPosition = values.to === undefined ? undefined : Number(values.to);
  if (toPosition !== undefined && (!Number.isInteger(toPosition) || toPosition < 0)) {
    process.stderr.write('--to must be a non-negative integer position\n');
    return 2;
  }
  const sizes: Record<'page-events' | 'page-mb' | 'max-held-rows', number | undefined> = { 'page-events': undefined, 'page-mb': undefined, 'max-held-rows': undefined };
  for (const flag of ['page-events', 'page-mb', 'max-held-rows'] as const) {
    const text = values[flag];
    if (text === undefined) continue;
    const value = Number(text);
    const least = flag === 'max-held-rows' ? 0 : 1;
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < least) {
      process.stderr.write(`--${flag} must be a whole number of at least ${least}, not '${text}'\n`);
      return 2;
    }
    sizes[flag] = value;
  }
  const ledger = await openLedger({ databaseUrl: process.env.DATABASE_URL, dataDir: values['data-dir'] ?? process.env.FLEET_LEDGER_DATA_DIR });
  try {
    const runner = new ProjectionRunner(ledger.store, projections, { maxHeldRows: sizes['max-held-rows'] });
    // Several read models are rebuilt together over one read of the log.
    const results = await runner.rebuildAll(names, {
      toPosition,
      maxPageEvents: sizes['page-events'],
      maxPageBytes: sizes['page-mb'] === undefined ? undefined : sizes['page-mb'] * 1024 * 1024,
      onProgress: (progress) => process.stderr.write(progressBar(progress)),
    });
    process.stderr.write('\n');
    for (const [name, result] of results) {
      process.stdout.write(`${name}: rebuilt to position ${result.position} (${result.events} events in ${result.seconds.toFixed(1)} s)\n`);
      if (result.viewsRestored.length > 0) process.stdout.write(`  views made again on the rebuilt tables: ${result.viewsRestored.join(', ')}\n`);
      for (const lost of result.viewsLost) process.stderr.write(`  view ${lost.view} no longer fits the rebuilt tables and was dropped: ${lost.reason}\n`);
    }
    return 0;
  } finally {
    await ledger.close();
  }
}
