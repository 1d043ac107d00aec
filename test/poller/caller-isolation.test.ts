import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIsolation, type IsolationRunResult } from '../../bench/support/isolation-run.js';
import { backends, freshDatabase } from '../support/backends.js';

/**
 * The small version of `npm run bench:isolation`: 256 BMCs (the simulator in its own process) checked every 5 s with
 * a 5 s deadline (generous: the suite shares two cores, and a check must not miss for want of CPU alone), while the API is sent an EBOM of about 8 MB whose last line is bad and 20 bodies of 1 MB at once.
 * The poller runs on its own thread and the bodies are read on the body thread, as `fleet-ledger start` runs them.
 */
describe('nothing a caller sends can delay a liveness check', () => {
  let result: IsolationRunResult;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    result = await runIsolation({ connectionString: db.url, bmcs: 256, intervalS: 5, phaseS: 10, ebomBytes: 8_000_000, bodies: 20, bodyBytes: 1_000_000, threaded: true, requestTimeoutMs: 5000 });
  }, 300_000);
  afterAll(async () => drop?.());

  it('an EBOM refused at its last line, and megabyte bodies, turn no node late or dark', () => {
    expect(result.loaded.liveness_checks, JSON.stringify(result)).toBeGreaterThan(256);
    expect(result.loaded.late_nodes, JSON.stringify(result)).toBe(0);
    expect(result.loaded.dark_nodes).toBe(0);
  });

  it('/healthz answers within 2 s throughout', () => {
    expect(result.loaded.healthz_max_ms, JSON.stringify(result)).toBeLessThan(2000);
  });

  it('the EBOM is refused naming its last line and nothing is written; every big body is answered', () => {
    expect(result.loaded.ebom_status, JSON.stringify(result)).toBe(400);
    expect(result.loaded.ebom_field).toMatch(/^body\[line \d+\]\.serial$/);
    expect(result.loaded.events_written).toBe(0);
    expect(result.loaded.bodies_statuses).toEqual({ 400: 20 });
  });
});
