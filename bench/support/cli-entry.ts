/**
 * How a test or benchmark starts the command line as a separate process: the compiled build (`npm ci` runs `npm run
 * build`) when it is at least as new as every source file, else the TypeScript sources through tsx. Starting several
 * ledgers at once through tsx compiles the program again in each process and each of its threads (poller,
 * projections, lease keeper): on 2 cores that delayed the first sweep of three processes by about two minutes, which
 * measured the compiler, not the poller. A stale build is never used, so a test always runs the sources it sees.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const built = join(root, 'dist', 'src', 'cli', 'main.js');
const sources = ['src', 'events', 'projections', 'sagas', 'replay'];

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** Node arguments that run `fleet-ledger` (put the command and its options after them). */
export function cliArguments(): string[] {
  if (existsSync(built)) {
    const builtAt = statSync(built).mtimeMs;
    if (sources.every((folder) => newestSource(join(root, folder)) <= builtAt)) return [built];
  }
  return ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts')];
}
