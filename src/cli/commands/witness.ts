/**
 * `fleet-ledger witness`: run by someone other than the ledger's operator, on another machine. It fetches each new
 * signed checkpoint, checks that it extends the last one it saw (an RFC 9162 consistency proof from the API, or the
 * published tiles), co-signs it with its own key, and keeps it. A checkpoint that is smaller than the last one seen
 * (a rollback) or that does not extend it (a fork: a rewritten or restored log) is refused: the witness never
 * advances past it, says so on stderr, writes `alarm.json` in its state folder and exits 4 (or keeps refusing with
 * --watch).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { loadOrCreateSigner, openCheckpoint } from '../../../replay/audit/index.js';
import { tilePath, tilesOfTree } from '../../../replay/audit/index.js';
import { addSignatures } from '../../../replay/checkpoint/index.js';
import { MerkleAccumulator, verifyConsistency } from '../../../replay/merkle/index.js';
import { callApi, connectionOf } from '../api-client.js';
import { FileArgumentError } from '../file-argument.js';
import { parseCommand } from '../parse-command.js';
import { verifierKeyArgument } from '../verifier-key-argument.js';

export const summary = 'witness a ledger: check each new checkpoint extends the last one seen, co-sign it, refuse forks and rollbacks';

const usage = `usage: fleet-ledger witness --log-key KEY --state DIR (--url URL | --from-dir DIR) [--watch S] [--witness-key FILE]

  --log-key KEY     the ledger's verifier key (<name>+<id>+<key>) or a file holding it
  --state DIR       the witness's own folder: its key, the last checkpoint it co-signed, alarm.json
  --url URL         the ledger API (checkpoint and consistency proofs are public routes)
  --from-dir DIR    a published folder instead (checkpoint + tlog tiles), e.g. a mirror
  --witness-key F   the witness's signing key (default <state>/witness.key, created 0600)
  --watch S         keep going, every S seconds (default: check once)
  --json            one JSON line per check

exit codes: 0 co-signed or nothing new, 1 error, 2 usage, 4 refused (fork or rollback)
`;

interface Seen {
  size: number;
  root: string;
  origin: string;
}

type Verdict = { kind: 'cosigned' | 'unchanged'; size: number; root: string } | { kind: 'refused'; reason: string; seen: Seen; offered: Seen };

function leavesFromDir(dir: string, size: number): Buffer[] {
  const leaves: Buffer[] = [];
  for (const tile of tilesOfTree(size).filter((t) => t.level === 0)) {
    const partial = join(dir, tilePath(0, tile.index, tile.width));
    const full = join(dir, tilePath(0, tile.index));
    const bytes = existsSync(partial) ? readFileSync(partial) : existsSync(full) ? readFileSync(full) : null;
    if (!bytes || bytes.length < tile.width * 32) throw new Error(`the folder lacks ${tilePath(0, tile.index, tile.width)}`);
    for (let i = 0; i < tile.width; i++) leaves.push(bytes.subarray(i * 32, i * 32 + 32));
  }
  return leaves;
}

function rootOf(leaves: readonly Buffer[]): Buffer {
  const accumulator = new MerkleAccumulator();
  for (const leaf of leaves) accumulator.push(leaf);
  return accumulator.root();
}

async function checkOnce(values: { url?: string; 'from-dir'?: string }, logKey: string, state: string, witnessKey: string): Promise<Verdict> {
  const note = values['from-dir'] ? readFileSync(join(values['from-dir'], 'checkpoint'), 'utf8') : await callApi<string>(connectionOf({ url: values.url }), '/v1/audit/checkpoint');
  const offered = openCheckpoint(note, logKey);
  const offeredSeen: Seen = { size: offered.size, root: offered.root.toString('hex'), origin: offered.origin };
  const seenFile = join(state, 'seen.json');
  const seen = existsSync(seenFile) ? (JSON.parse(readFileSync(seenFile, 'utf8')) as Seen) : null;
  const refuse = (reason: string): Verdict => ({ kind: 'refused', reason, seen: seen!, offered: offeredSeen });
  if (seen) {
    if (seen.origin !== offered.origin) return refuse(`the checkpoint is of origin '${offered.origin}', this witness follows '${seen.origin}'`);
    if (offered.size < seen.size) return refuse(`rollback: the log offers size ${offered.size}, this witness already co-signed size ${seen.size}`);
    if (offered.size === seen.size) {
      if (offeredSeen.root !== seen.root) return refuse(`fork: size ${offered.size} now has root ${offeredSeen.root}, this witness co-signed ${seen.root}`);
      return { kind: 'unchanged', size: seen.size, root: seen.root };
    }
    let consistent: boolean;
    let why = '';
    if (values['from-dir']) {
      const leaves = leavesFromDir(values['from-dir'], offered.size);
      consistent = rootOf(leaves).equals(offered.root) && rootOf(leaves.slice(0, seen.size)).equals(Buffer.from(seen.root, 'hex'));
      why = 'the published tiles do not extend the tree this witness co-signed';
    } else {
      const proof = await callApi(connectionOf({ url: values.url }), '/v1/audit/proofs/consistency', { query: { from: seen.size, to: offered.size } });
      // The proof is checked against the roots this witness holds, never against the roots the log sends along.
      consistent = verifyConsistency(seen.size, offered.size, Buffer.from(seen.root, 'hex'), offered.root, (proof.proof as string[]).map((h) => Buffer.from(h, 'hex')));
      why = `the consistency proof from size ${seen.size} to ${offered.size} does not hold against the root this witness co-signed`;
    }
    if (!consistent) return refuse(`fork: ${why}`);
  }
  const cosigned = addSignatures(note, [witnessKey]);
  mkdirSync(join(state, 'cosigned'), { recursive: true });
  writeFileSync(join(state, 'cosigned', String(offered.size)), cosigned);
  const temporary = `${seenFile}.tmp`;
  writeFileSync(temporary, JSON.stringify(offeredSeen));
  renameSync(temporary, seenFile);
  return { kind: 'cosigned', size: offered.size, root: offeredSeen.root };
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand(
    'witness',
    argv,
    {
      'log-key': { type: 'string' },
      state: { type: 'string' },
      url: { type: 'string' },
      'from-dir': { type: 'string' },
      'witness-key': { type: 'string' },
      watch: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    usage,
    false,
    {
      'from-dir': { kind: 'directory', what: 'published folder' },
      'witness-key': { kind: 'file-if-present', what: 'witness key file' },
      state: { kind: 'directory-if-present', what: 'state folder' },
    },
  );
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  if (!values['log-key'] || !values.state || (!values.url && !values['from-dir'])) {
    process.stderr.write(`fleet-ledger witness: --log-key, --state and one of --url or --from-dir are required\n${usage}`);
    return 2;
  }
  let logKey: string;
  try {
    logKey = verifierKeyArgument(values['log-key'], '--log-key');
  } catch (error) {
    if (!(error instanceof FileArgumentError)) throw error;
    process.stderr.write(`fleet-ledger witness: ${error.message}\n`);
    return 2;
  }
  mkdirSync(values.state, { recursive: true, mode: 0o700 });
  const witness = loadOrCreateSigner(values['witness-key'] ?? join(values.state, 'witness.key'), `witness-${hostname().replace(/[^A-Za-z0-9.-]/g, '-')}`);
  const watchS = values.watch ? Number(values.watch) : undefined;
  if (watchS !== undefined && (!Number.isFinite(watchS) || watchS < 1)) {
    process.stderr.write(`fleet-ledger witness: --watch must be seconds >= 1, got '${values.watch}'\n`);
    return 2;
  }
  for (;;) {
    let code = 0;
    try {
      const verdict = await checkOnce(values, logKey, values.state, witness.signerKey);
      if (verdict.kind === 'refused') {
        code = 4;
        const alarm = { at: new Date().toISOString(), ...verdict };
        writeFileSync(join(values.state, 'alarm.json'), `${JSON.stringify(alarm, null, 2)}\n`);
        process.stderr.write(`ALARM: witness refuses the checkpoint: ${verdict.reason}\n`);
        if (values.json) process.stdout.write(`${JSON.stringify(alarm)}\n`);
      } else if (values.json) process.stdout.write(`${JSON.stringify({ at: new Date().toISOString(), witness: witness.verifierKey, ...verdict })}\n`);
      else process.stdout.write(verdict.kind === 'cosigned' ? `co-signed size ${verdict.size} root ${verdict.root} as ${witness.verifierKey.split('+')[0]}\n` : `nothing new (size ${verdict.size})\n`);
    } catch (error) {
      code = 1;
      process.stderr.write(`fleet-ledger witness: ${error instanceof Error ? error.message : String(error)}\n`);
    }
    if (watchS === undefined) return code;
    await new Promise((resolve) => setTimeout(resolve, watchS * 1000));
  }
}
