/**
 * `fleet-ledger ebom import <file>`: declares the fleet's bill of materials. The whole file is validated first;
 * a bad row is reported with its line and reason and nothing is imported. The operator is `--as` or `$USER`.
 */
import { extname } from 'node:path';
import { importEbom } from '../../ebom/index.js';
import { openLedger } from '../../ledger/index.js';
import { FileArgumentError, readFileArgument } from '../file-argument.js';
import { parseCommand } from '../parse-command.js';

export const summary = 'import an EBOM (CSV or JSON) as one decision: every row valid, or nothing imported';

const usage = `usage: fleet-ledger ebom import <file.csv|file.json> [--format csv|json] [--as OPERATOR] [--import-id ID] [--json] [--data-dir DIR]

  --format     the file's format (default: from its extension, .json is JSON, anything else CSV)
  --as         the operator principal recorded on the events (default: $USER)
  --import-id  the import's id (default: derived from the file's digest, so a re-run completes, never repeats)
  --json       print the result as JSON
  DATABASE_URL set: import into that PostgreSQL server instead of the embedded one.
`;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand('ebom', argv, {
    format: { type: 'string' },
    as: { type: 'string' },
    'import-id': { type: 'string' },
    json: { type: 'boolean' },
    'data-dir': { type: 'string' },
  }, usage, true, { 'data-dir': { kind: 'directory-if-present', what: 'data folder' } });
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const [action, file] = positionals;
  if (action !== 'import' || !file || positionals.length !== 2) {
    process.stderr.write(usage);
    return 2;
  }
  const format = (values.format ?? (extname(file).toLowerCase() === '.json' ? 'json' : 'csv')) as 'csv' | 'json';
  if (format !== 'csv' && format !== 'json') {
    process.stderr.write(`--format must be csv or json\n`);
    return 2;
  }
  let text: string;
  try {
    text = readFileArgument(file, { option: 'FILE', what: 'EBOM file' });
  } catch (error) {
    if (!(error instanceof FileArgumentError)) throw error;
    process.stderr.write(`fleet-ledger ebom: ${error.message}\n`);
    return 2;
  }
  const operatorId = values.as ?? process.env.USER;
  if (!operatorId) {
    process.stderr.write('no operator: pass --as OPERATOR (or set $USER)\n');
    return 2;
  }
  const ledger = await openLedger({ databaseUrl: process.env.DATABASE_URL, dataDir: values['data-dir'] ?? process.env.FLEET_LEDGER_DATA_DIR });
  try {
    const result = await importEbom(ledger.store, { text, format, source: file, operatorId, importId: values['import-id'] });
    if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
    if (!result.ok) {
      if (!values.json) {
        process.stderr.write(`${file}: nothing imported, ${result.problems.length} problem(s):\n`);
        for (const problem of result.problems) process.stderr.write(`  line ${problem.line}${problem.field ? ` ${problem.field}` : ''}: ${problem.reason}\n`);
      }
      return 1;
    }
    if (!values.json) {
      process.stdout.write(
        result.alreadyImported
          ? `${file}: already imported as ${result.importId} (${result.rows} nodes); nothing written\n`
          : `${file}: imported ${result.rows} node declarations as ${result.importId} by ${operatorId}\n`,
      );
    }
    return 0;
  } finally {
    await ledger.close();
  }
}
