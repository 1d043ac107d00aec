#!/usr/bin/env node
/**
 * Compiles the product (src, events, projections, sagas, replay) to JavaScript in `dist/` (or the folder given as the
 * first argument), laid out as the repository is, and copies beside it the files the program reads at run time: the
 * dashboard's static files and the demo scenario. `bin/fleet-ledger.js` runs `dist/src/cli/main.js`, so a command
 * starts without compiling TypeScript. Run by `npm run build`, and by `prepare` at `npm ci`.
 *
 * Type errors are reported by `npm run typecheck`; the build emits without checking (`--noCheck`), which halves its
 * time on a busy machine. The output folder is emptied first, so a deleted source leaves no stale module behind.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = resolve(root, process.argv[2] ?? 'dist');
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');

rmSync(outDir, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', outDir, '--noCheck'], { cwd: root, stdio: 'inherit' });
// Read through `new URL(..., import.meta.url)` by src/api/routes/dashboard-routes.ts and src/demo/demo-scenario.ts.
cpSync(join(root, 'src/api/dashboard'), join(outDir, 'src/api/dashboard'), { recursive: true });
mkdirSync(join(outDir, 'examples'), { recursive: true });
cpSync(join(root, 'examples/scenario-demo.yaml'), join(outDir, 'examples/scenario-demo.yaml'));
