#!/usr/bin/env -S node --max-semi-space-size=64
// Semi-spaces of 64 MB: a rebuild allocates every event it reads, and with the default it ran 5-10% slower
// (`npm run bench:replay`, README). Runs the TypeScript command line in this process through tsx's loader, so
// `npx fleet-ledger` needs no build step and signals (SIGINT, SIGTERM) reach the program itself.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
