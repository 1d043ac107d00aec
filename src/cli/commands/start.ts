import { parseArgs } from 'node:util';
import { openLedger } from '../../ledger/index.js';
import { logger } from '../../logger.js';

export const summary = 'start the ledger on the embedded PostgreSQL (or DATABASE_URL) and serve until stopped';

export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      'pg-port': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write('fleet-ledger start [--data-dir DIR] [--pg-port N]\n  DATABASE_URL set: use that PostgreSQL server instead of the embedded one.\n');
    return 0;
  }
  const ledger = await openLedger({
    databaseUrl: process.env.DATABASE_URL,
    dataDir: values['data-dir'] ?? process.env.FLEET_LEDGER_DATA_DIR,
    port: values['pg-port'] ? Number(values['pg-port']) : undefined,
    log: (message) => logger.debug({ component: 'postgres' }, message),
  });
  const head = await ledger.store.head();
  logger.info({ backend: ledger.backend, location: ledger.location, headPosition: head.position }, `fleet-ledger is up: ${ledger.location}, ${head.position} events in the log`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      logger.info({ signal }, 'stopping');
      resolve();
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  await ledger.close();
  logger.info('stopped cleanly');
  return 0;
}
