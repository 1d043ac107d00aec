/**
 * The tests of the official client's suite that fail against fleet-ledger, each with why (the same list, with the
 * same reasons, is in src/kurrent/README.md). Keyed by file (relative to the suite's folder) then by the test's
 * full name (its describe blocks and its own name, joined by ` > `). `jest-compat.ts` holds each to failing: one that
 * passes fails the run until it is taken off. `limitMs`: how long it may run before its not ending counts as its
 * failure (a subscription waiting for an event the face never sends); default 5 s.
 */
import { suiteLocation } from './suite-location.js';

export interface ExpectedFailure {
  reason: string;
  limitMs?: number;
}

export function suiteRoot(): string {
  return suiteLocation().dir ?? '';
}

export const expectedFailures: Record<string, Record<string, ExpectedFailure>> = {};
