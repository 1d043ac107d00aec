/**
 * `fleet-ledger rebuild [name|--all] [--to POSITION]`: rebuilds read models from zero (or up to a position) into
 * fresh tables and swaps them in, with a progress bar on stderr.
 */
import { fleetProjections } from '../../../projections/index.js';
import { openLedger, ProjectionRunner, type RebuildProgress } from '../../ledger/index.js';
import { parseCommand } from '../parse-command.js';

export const summary = 'rebuild one projection (or --all) from zero, optionally only up to --to POSITION';

const usage = `usage: fleet-ledger rebuild <name>|--all [--to POSITION] [--data-dir DIR]

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
  const parsed = parseCommand('rebuild', argv, { all: { type: 'boolean' }, to: { type: 'string' }, 'data-dir': { type: 'string' } }, usage);
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
  const ledger = await openLedger({ databaseUrl: process.env.DATABASE_URL, dataDir: values['data-dir'] ?? process.env.FLEET_LEDGER_DATA_DIR });
  try {
    const runner = new ProjectionRunner(ledger.store, projections);
    // Several read models are rebuilt together over one read of the log.
    const results = await runner.rebuildAll(names, { toPosition, onProgress: (progress) => process.stderr.write(progressBar(progress)) });
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
