#!/usr/bin/env -S node --max-semi-space-size=64
// Semi-spaces of 64 MB: a rebuild allocates every event it reads, and with the default it ran 5-10% slower
// (`npm run bench:replay`, README). Runs the compiled command line (`npm run build`, run by `npm ci` through
// `prepare`) in this process, so signals (SIGINT, SIGTERM) reach the program itself and no TypeScript is compiled
// at start. Working on the sources without a build: `node --import tsx src/cli/main.ts <command>`.
const main = new URL('../dist/src/cli/main.js', import.meta.url);

try {
  await import(main.href);
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(main.pathname)) throw error;
  process.stderr.write('fleet-ledger: not built yet: run `npm run build` (npm ci runs it), or run the sources with `node --import tsx src/cli/main.ts`\n');
  process.exit(1);
}
