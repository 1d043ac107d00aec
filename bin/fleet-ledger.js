#!/usr/bin/env node
// Runs the TypeScript command line in this process through tsx's loader, so `npx fleet-ledger`
// needs no build step and signals (SIGINT, SIGTERM) reach the program itself.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
