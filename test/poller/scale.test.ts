import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScale, type ScaleRunResult } from '../../bench/support/scale-run.js';
import { backends, freshDatabase } from '../support/backends.js';

/**
 * The 500-BMC version of `npm run bench:scale`: the simulator in its own process over real HTTP, the
 * scheduler at a 5 s interval, 20 BMCs made dark at 10 s and 10 flapping (answering at least once in
 * every five polls). The same invariants as the 25,000-BMC run.
 */
describe('the scheduler at 500 BMCs and a 5 s interval', () => {
  let result: ScaleRunResult;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    // On a machine shared with the rest of the suite the first reads may not get the CPU they need within 75 s (two
    // cores 99.6% busy gave 440 of 470 nodes): the run then goes on until they are done, up to 150 s.
    result = await runScale({ bmcs: 500, intervalS: 5, durationS: 75, inventoryDeadlineS: 150, darkAtS: 10, darkCount: 20, flapCount: 10, naive: false, connectionString: db.url, firstReadSpreadS: 20, latencyScale: 0.1 });
  }, 300_000);
  afterAll(async () => drop?.());

  it('no BMC is ever refused a session and none is knocked over', () => {
    expect(result.session_limit_violations).toBe(0);
    expect(result.bmc_resets).toBe(0);
  });

  it('every answering BMC is contacted within each interval', () => {
    expect(result.first_sweep_s).toBeLessThanOrEqual(5 * 1.1 + 1);
    expect(result.contact_gap_max_s).toBeLessThanOrEqual(5 * 1.1 + 1.5);
  });

  it('a BMC gone dark is detected within ten intervals plus one', () => {
    expect(result.dark_detected).toBe(20);
    expect(result.dark_detect_latency_p99_s!).toBeLessThanOrEqual(10 * 5 + 5);
  });

  it('a BMC that flaps but answers once in five polls raises no dark alarm', () => {
    expect(result.false_dark_alarms).toBe(0);
  });

  it('a fleet brought up is inventoried within its first-read spread: every answering node has its inventory and firmware read once', () => {
    // First contacts within one interval, first reads spread over 20 s after them; at a tenth of the modelled
    // latency, the slowest firmware inventory (150 s on a GB200) takes 15 s.
    expect(result.first_inventory_s, JSON.stringify(result)).not.toBeNull();
    // Within minutes, where first reads spread over a whole interval would take half an hour for the inventory and
    // four hours for firmware (about 40 s on an idle machine: 5 s to the first contacts, 20 s of spread, 15 s of read).
    expect(result.first_inventory_s!).toBeLessThanOrEqual(150);
    expect(result.inventoried_nodes).toBeGreaterThanOrEqual(500 - 20 - 10);
  });

  it('the projections keep up with the poller: no event waits more than a few seconds to be applied', () => {
    // A projection that fell behind would see its lag grow through the run; here it stays bounded (loose: CI shares
    // two cores with the rest of the suite; bench:scale measures it at 25,000 BMCs).
    expect(result.projection_lag_p99_s, JSON.stringify(result)).not.toBeNull();
    expect(result.projection_lag_max_s!).toBeLessThan(15);
  });

  it('every poll outcome is recorded in the ledger', () => {
    expect(result.outcome_bytes_per_node_day).toBeGreaterThan(0);
  });
});
