import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRollout, type RolloutRunResult } from '../../bench/support/rollout-run.js';
import { backends, freshDatabase } from '../support/backends.js';

/**
 * The small version of `npm run bench:rollout`: 40 simulated BMCs, a site cap of 4, the rollout engine SIGKILLed 30
 * times at seeded moments (100 ms to 0.7 s after it takes the rollout) and started again each time, with update
 * faults on some BMCs: answers lost after the BMC accepted, tasks purged before they are read, a BMC resetting
 * mid-update and forgetting it, Completed with Critical status and nothing applied. Judged from the BMCs' side.
 */
describe('a firmware rollout killed 30 times', () => {
  let result: RolloutRunResult;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    const started = performance.now();
    result = await runRollout({
      connectionString: db.url,
      bmcs: 40,
      cap: 4,
      kills: 30,
      seed: 20261203,
      failureRate: 0,
      killAfterMs: [100, 700],
      updateMs: 600,
      resetDarkMs: 500,
      livenessIntervalS: 2,
      waveFractions: [0.2, 0.4],
      rackLimit: 4,
      faults: (ids) => [
        { fault: 'update-fault', mode: 'lost-response', target: { bmc: ids.slice(0, 4) } },
        { fault: 'update-fault', mode: 'purge-task', target: { bmc: ids.slice(4, 8) } },
        { fault: 'update-fault', mode: 'reset-mid-update', target: { bmc: ids.slice(8, 11) } },
        { fault: 'update-fault', mode: 'completed-critical', target: { bmc: ids.slice(11, 13) } },
      ],
      // Generous: under a loaded CI machine every one of the 31 engine starts is slow (it took 135 to 240 s).
      timeoutMs: 420_000,
      log: (line) => process.stderr.write(`${((performance.now() - started) / 1000).toFixed(1)} s ${line}\n`),
    });
    process.stderr.write(`rollout kill test: ${JSON.stringify(result)}\n`);
  }, 480_000);
  afterAll(async () => drop?.());

  it('the engine was killed 30 times and the rollout still completed', () => {
    expect(result.kills).toBe(30);
    expect(result.status).toBe('completed');
  });

  it('no intent is ever submitted to a BMC twice, and every submission names its intent', () => {
    expect(result.submissions).toBeGreaterThanOrEqual(result.nodes);
    expect(result.unkeyed_submissions).toBe(0);
    expect(result.duplicate_submissions).toBe(0);
  });

  it('the BMCs never see more nodes updating at once than the cap', () => {
    expect(result.max_in_flight_observed).toBeGreaterThan(1);
    expect(result.max_in_flight_observed).toBeLessThanOrEqual(result.cap);
  });

  it('every node ends completed, failed, quarantined or in a named hold', () => {
    expect(result.completed + result.failed + result.quarantined + result.skipped + result.held).toBe(result.nodes);
    expect(result.completed).toBeGreaterThanOrEqual(result.nodes - 2);
  });
});
