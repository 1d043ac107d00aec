import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRollout, type RolloutRunResult } from '../../bench/support/rollout-run.js';
import { backends, freshDatabase } from '../support/backends.js';

/**
 * Sagas across processes: three processes each run a saga supervisor (as `fleet-ledger start` does) on one database,
 * over one simulated fleet of 24 BMCs with a site cap of 4. The process that holds the rollout (its advisory lock in
 * `pg_locks`, named by its `application_name`) is SIGKILLed 3 times at seeded moments, 2 to 6 s after it took the
 * rollout (with another process up and standing by), and a new process is started in its place each time; between the kills, twice,
 * only the holder's lock session is ended (`pg_terminate_backend`) while its process lives on. Judged from the BMCs'
 * side (submissions per intent, the most nodes updating at once, the version each BMC reports) and from the
 * database's (which process appended each of the rollout's events, and which held the rollout's lock at that
 * instant, recorded by a trigger).
 */
describe('a rollout whose process is killed goes on in another process', () => {
  let result: RolloutRunResult;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await freshDatabase(backends()[0]!.adminUrl!);
    drop = db.drop;
    result = await runRollout({
      connectionString: db.url,
      bmcs: 24,
      cap: 4,
      kills: 3,
      cuts: 2,
      processes: 3,
      seed: 20260415,
      failureRate: 0,
      killAfterMs: [2_000, 6_000],
      updateMs: 1_000,
      resetDarkMs: 600,
      livenessIntervalS: 2,
      waveFractions: [0.25, 0.5],
      rackLimit: 4,
      // Answers lost after the BMC accepted: a take-over must resolve these by probing, never by sending again.
      faults: (ids) => [{ fault: 'update-fault', mode: 'lost-response', target: { bmc: ids.slice(0, 3) } }],
      timeoutMs: 75_000,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    process.stderr.write(`rollout across processes: ${JSON.stringify(result)}\n`);
  }, 110_000);
  afterAll(async () => drop?.());

  it('the process holding the rollout was killed 3 times, and each time another process took it over and finished it', () => {
    expect(result.kills).toBe(3);
    expect(result.status).toBe('completed');
    const across = result.across_processes!;
    const kills = across.takeovers.filter((takeover) => takeover.how === 'kill');
    expect(kills).toHaveLength(3);
    for (const takeover of kills) {
      expect(takeover.by).not.toBe('');
      expect(takeover.by).not.toBe(takeover.killed);
    }
    // Four processes or more dispatched: the first holder and one successor per kill.
    expect(new Set(across.dispatchers.map((d) => d.process)).size).toBeGreaterThanOrEqual(4);
  });

  it('a process whose lock session ends stops, and the rollout is taken over', () => {
    const cuts = result.across_processes!.takeovers.filter((takeover) => takeover.how === 'cut');
    expect(cuts).toHaveLength(2);
    for (const takeover of cuts) expect(takeover.by).not.toBe('');
  });

  it('no two processes ever dispatched for the rollout at once: one session held it at a time, and no process appended once another had taken it over', () => {
    const across = result.across_processes!;
    expect(across.max_lock_holders).toBe(1);
    expect(across.appends).toBeGreaterThan(result.nodes * 10);
    // Taken over = the lock taken and the epoch raised; an append in its transaction meanwhile is waited for (and
    // read by the new owner), which `appends_beside_owner` counts and this does not.
    expect(across.appends_after_superseded).toBe(0);
    expect(across.appends_beside_owner).toBeLessThanOrEqual(across.takeovers.length * (result.cap + 1));
    // Writes already under way when a lock session ended (one per step worker at most) may still land, before anyone
    // else holds the rollout; nothing is started after it.
    expect(across.appends_after_lease_lost.length).toBeLessThanOrEqual(2 * (result.cap + 1));
  });

  it('every append carries the saga epoch it was written under, and no superseded owner wrote after its successor', () => {
    const across = result.across_processes!;
    expect(across.unfenced_appends).toBe(0);
    expect(across.epoch_regressions).toBe(0);
    expect(across.epochs_shared).toBe(0);
    // The first take and one per interruption at least (3 kills and 2 cuts), each with a higher epoch.
    expect(across.epochs.length).toBeGreaterThanOrEqual(1 + 3 + 2);
  });

  it('standing by holds no connection: no session ever waits for the rollout lock', () => {
    expect(result.across_processes!.max_lock_waiters).toBe(0);
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

  it('every node ends updated, and every BMC reports the target version', () => {
    expect(result.completed).toBe(result.nodes);
    expect(result.at_target).toBe(result.nodes);
  });
});
