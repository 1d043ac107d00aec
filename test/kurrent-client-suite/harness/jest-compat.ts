/**
 * Runs before every file of the official client's suite (vitest `setupFiles`). The files were written for Jest; what
 * they use of it is given here from vitest, and their tests are wrapped so the expected failures (each with its
 * reason, `expected-failures.ts`) are held to failing:
 *
 * - `jest.fn`, `jest.spyOn`: vitest's `vi.fn`, `vi.spyOn`. `jest.setTimeout(ms)` is ignored: every test runs under
 *   this suite's own limit (`suiteTestTimeoutMs`), so no test can hold the run.
 * - An expected failure passes when its test fails (or has not ended after its `limitMs`), and fails, saying so, when
 *   its test passes: a fixed behaviour must leave the list. Every other test runs as written. A file's `beforeAll`
 *   listed as failing (`expectedSetupFailures`) is held to failing the same way, and its tests then run.
 */
import { relative } from 'node:path';
import { expect, vi } from 'vitest';
import { expectedFailures, expectedSetupFailures, suiteRoot } from './expected-failures.js';

type Body = (...args: unknown[]) => unknown;

const jest = {
  fn: vi.fn,
  spyOn: vi.spyOn,
  setTimeout: (_ms: number) => undefined,
};
(globalThis as unknown as { jest: typeof jest }).jest = jest;

/** The file (relative to the suite's root) and full name of the running test. */
function currentTest(): { file: string; name: string } {
  const state = expect.getState();
  return { file: relative(suiteRoot(), state.testPath ?? ''), name: state.currentTestName ?? '' };
}

/** The body of a test, held to failing when it is listed. */
function guarded(body: Body): Body {
  return async function (this: unknown, ...args: unknown[]) {
    const { file, name } = currentTest();
    const expected = expectedFailures[file]?.[name];
    if (!expected) return body.apply(this, args);
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<'timed out'>((resolve) => {
      timer = setTimeout(() => resolve('timed out'), expected.limitMs ?? 5_000);
    });
    let outcome: unknown;
    try {
      outcome = await Promise.race([Promise.resolve(body.apply(this, args)).then(() => 'passed' as const), limit]);
    } catch {
      outcome = 'failed';
    } finally {
      clearTimeout(timer);
    }
    if (outcome === 'passed') throw new Error(`listed as an expected failure (${expected.reason}), but it passed: take it off the list in expected-failures.ts`);
  };
}

/**
 * A `beforeAll` of a file whose setup is listed as failing (`expectedSetupFailures`): an error is noted and swallowed,
 * so the file's tests run (and fail, each listed with the reason) instead of the whole file being skipped with an error.
 */
function guardedHook(hook: Body): Body {
  // No parameters: vitest reads a hook's first parameter as fixtures; the suite's hooks take none.
  return async function (this: unknown) {
    const file = relative(suiteRoot(), expect.getState().testPath ?? '');
    const reason = expectedSetupFailures[file];
    if (!reason) return hook.call(this);
    // (A file has several hooks, and only one need fail: a setup that stops failing shows as its tests passing.)
    try {
      await hook.call(this);
    } catch (error) {
      console.info(`expected setup failure in ${file} (${reason}): ${error instanceof Error ? error.message : String(error)}`);
    }
  };
}

/** `test` or `it` with every form that takes a body (`(name, fn, timeout)`, `(name, options, fn)`, `.each`, `.only`) guarded. */
function wrapTestApi<T extends object>(api: T): T {
  const wrapArgs = (args: unknown[]): unknown[] => args.map((arg) => (typeof arg === 'function' ? guarded(arg as Body) : arg));
  return new Proxy(api, {
    apply: (target, self, args: unknown[]) => Reflect.apply(target as Body, self, wrapArgs(args)),
    get: (target, key, receiver) => {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (key === 'each') {
        return (...table: unknown[]) => {
          const register = (value as (...rows: unknown[]) => Body).apply(target, table);
          return (...args: unknown[]) => register(...wrapArgs(args));
        };
      }
      if (key === 'only' || key === 'concurrent' || key === 'sequential') return wrapTestApi(value as object);
      return value;
    },
  });
}

// Wrapped once per worker: the files share their worker's globals (the project runs them without isolation).
const wrapped = Symbol.for('fleet-ledger.kurrent-client-suite.wrapped');
const globals = globalThis as unknown as { test: object; it: object; [wrapped]?: true };
if (!globals[wrapped]) {
  globals.test = wrapTestApi(globals.test);
  globals.it = wrapTestApi(globals.it);
  const hooks = globalThis as unknown as { beforeAll: (hook: Body, timeout?: number) => void };
  const beforeAll = hooks.beforeAll;
  hooks.beforeAll = (hook: Body, timeout?: number) => beforeAll(guardedHook(hook), timeout);
  globals[wrapped] = true;
}
