/**
 * The event store on a Patroni cluster (three PostgreSQL nodes, synchronous_mode strict, HAProxy in front; see
 * bench/support/patroni-cluster.ts), at the moments a failover makes hard:
 * - a COMMIT whose wait for the synchronous standby is ended from outside (a cancel request answers it as a success,
 *   with a warning; a terminated session leaves it committed on the primary alone): the store acknowledges nothing
 *   until a standby has it;
 * - a connection cut after its COMMIT reached the primary, and the primary killed before the outcome is asked: the
 *   outcome is asked of the new primary (committed, stored once);
 * - an append waiting for its standby when the primary dies: the answer is the new primary's truth, and a retry with
 *   the same event ids stores it once.
 * Off CI without the programs these skip, naming the install command.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore, isLedgerError } from '../../src/ledger/index.js';
import { patroniRequirement, postmasterPid, startPatroniCluster, type PatroniCluster } from '../../bench/support/patroni-cluster.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { cordon } from '../support/ledger-fixtures.js';

const patroni = patroniRequirement();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!patroni.runnable)(patroni.title('the event store across a Patroni failover'), () => {
  let cluster: PatroniCluster;
  let databases = 0;

  beforeAll(async () => {
    patroni.require();
    cluster = await startPatroniCluster();
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  /** A new database on the cluster, through HAProxy. */
  const freshUrl = async (): Promise<string> => {
    const name = `failover_${(databases += 1)}`;
    const admin = new pg.Client({ connectionString: cluster.primaryUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    return cluster.database(cluster.primaryUrl, name);
  };
  const copies = async (url: string, eventId: string): Promise<number> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM ledger_events WHERE event_id = $1', [eventId])).rows[0]!.n);
    } finally {
      await client.end();
    }
  };
  const standbys = async (): Promise<string[]> => (await cluster.members()).filter((member) => !['leader', 'master', 'primary'].includes(member.role)).map((member) => member.name);
  /** The leader and its postmaster's pid, read ahead so a kill can be sent at an exact moment. */
  const leaderPostmaster = async (): Promise<{ name: string; pid: number }> => {
    const name = (await cluster.leader())!;
    const pid = postmasterPid(cluster.nodes.find((node) => node.name === name)!.dataDir)!;
    return { name, pid };
  };

  /**
   * Someone ends the wait of an append's COMMIT for its standby (a cancel request, as a job that cancels long
   * statements sends, or the session terminated): PostgreSQL then makes the commit visible on the primary alone, and a
   * cancel even answers it as a success. The store acknowledges it only once a standby has it.
   */
  for (const how of ['cancel', 'terminate'] as const) {
    it(`an append whose wait for the synchronous standby is ended by pg_${how}_backend is acknowledged only once a standby has it`, async () => {
      await cluster.waitHealthy();
      const url = await freshUrl();
      const store = await EventStore.open({ connectionString: url, commitResolutionMs: 60_000 });
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        await store.append('node-warm', [cordon('warm')]);
        const paused = await standbys();
        for (const name of paused) cluster.pauseNode(name);
        let settled: { at: number; ok: boolean } | null = null;
        const eventId = how === 'cancel' ? '01937a00-0000-7000-8000-0000000051a1' : '01937a00-0000-7000-8000-0000000051b1';
        const append = store.append(`node-s1-${how}`, [cordon(`s1-${how}`, 'while no standby confirms', eventId)]).then(
          () => void (settled = { at: Date.now(), ok: true }),
          () => void (settled = { at: Date.now(), ok: false }),
        );
        // The COMMIT waits for the standby; its wait is ended from outside.
        let ended = 0;
        for (const deadline = Date.now() + 10_000; ended === 0 && Date.now() < deadline; ) {
          await sleep(200);
          ended = (await admin.query(`SELECT count(pg_${how}_backend(pid)) AS n FROM pg_stat_activity WHERE wait_event = 'SyncRep'`)).rows[0].n;
        }
        expect(Number(ended)).toBeGreaterThan(0);
        // Visible on the primary now (PostgreSQL's doing), and still not acknowledged: on no standby.
        for (let i = 0; i < 10 && Number((await admin.query('SELECT count(*) AS n FROM ledger_events WHERE event_id = $1', [eventId])).rows[0].n) === 0; i += 1) await sleep(200);
        expect(Number((await admin.query('SELECT count(*) AS n FROM ledger_events WHERE event_id = $1', [eventId])).rows[0].n)).toBe(1);
        await sleep(2000);
        expect(settled).toBeNull();
        const resumedAt = Date.now();
        for (const name of paused) cluster.resumeNode(name);
        await append;
        expect(settled).toMatchObject({ ok: true });
        expect(settled!.at).toBeGreaterThanOrEqual(resumedAt);
        expect(await copies(url, eventId)).toBe(1);
      } finally {
        await admin.end();
        await store.close();
      }
    }, 60_000);
  }

  it('a connection cut after its COMMIT reached the primary, the primary killed before the outcome is asked: the new primary is asked, and answers committed (stored once)', async () => {
    await cluster.waitHealthy();
    const url = await freshUrl();
    const target = new URL(url);
    const proxy = new FaultProxy({ host: target.hostname, port: Number(target.port) });
    await proxy.listen();
    target.port = String(proxy.port);
    const store = await EventStore.open({ connectionString: target.toString(), commitResolutionMs: 60_000 });
    try {
      await store.append('node-warm', [cordon('warm')]);
      const old = await leaderPostmaster();
      // The COMMIT goes through (and, synchronous, to the standby); 150 ms later, before the connection is cut and the
      // outcome asked, the primary's postmaster is killed: only the next primary can answer.
      proxy.onCut = () => setTimeout(() => process.kill(old.pid, 'SIGKILL'), 150);
      proxy.mode = { kind: 'cut-after-commit', forwardCommit: true };
      const eventId = '01937a00-0000-7000-8000-0000000051a2';
      const started = Date.now();
      const result = await store.append('node-s2', [cordon('s2', 'committed as the primary died', eventId)]);
      expect(result).toMatchObject({ idempotentReplay: false, nextExpectedVersion: 1 });
      const newLeader = await cluster.waitNewLeader(old.name);
      expect(newLeader).not.toBe(old.name);
      // Answered only after the failover: the old primary could not be asked.
      expect(Date.now() - started).toBeGreaterThan(1000);
      expect(await copies(url, eventId)).toBe(1);
      const again = await store.append('node-s2', [cordon('s2', 'committed as the primary died', eventId)]);
      expect(again).toMatchObject({ idempotentReplay: true, positions: result.positions });
      expect((await store.verifyChain()).ok).toBe(true);
    } finally {
      proxy.onCut = null;
      await store.close();
      await proxy.close();
    }
  }, 120_000);

  it('an append waiting for its standby when the primary dies is answered with the new primary\'s truth; a retry with the same event ids stores it once', async () => {
    await cluster.waitHealthy();
    const url = await freshUrl();
    const store = await EventStore.open({ connectionString: url, commitResolutionMs: 60_000 });
    try {
      await store.append('node-warm', [cordon('warm')]);
      const old = await leaderPostmaster();
      const paused = await standbys();
      for (const name of paused) cluster.pauseNode(name);
      const eventId = '01937a00-0000-7000-8000-0000000051a3';
      const event = cordon('s3', 'waiting for the standby as the primary died', eventId);
      const first = store.append('node-s3', [event]).then(
        (result) => ({ ok: true as const, result }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      await sleep(1000);
      process.kill(old.pid, 'SIGKILL');
      for (const name of paused) cluster.resumeNode(name);
      const outcome = await first;
      await cluster.waitNewLeader(old.name);
      const stored = await copies(url, eventId);
      if (outcome.ok) {
        // Acknowledged: the standby had it (the WAL sent before the pause reached its socket), so the new primary does.
        expect(stored).toBe(1);
      } else {
        // Refused: retryable, and true of the new primary (nothing stored there, or told unknown).
        expect(isLedgerError(outcome.error) && ['LEDGER_STORE_UNAVAILABLE', 'LEDGER_COMMIT_UNKNOWN'].includes(outcome.error.code)).toBe(true);
        if (isLedgerError(outcome.error) && outcome.error.code === 'LEDGER_STORE_UNAVAILABLE') expect(stored).toBe(0);
      }
      // The caller retries with the same ids, as told: stored once whichever it was.
      const retried = await store.append('node-s3', [event]);
      expect(retried.idempotentReplay).toBe(stored === 1);
      expect(await copies(url, eventId)).toBe(1);
      expect((await store.readStream('node-s3')).map((e) => e.eventId)).toEqual([eventId]);
      expect((await store.verifyChain()).ok).toBe(true);
    } finally {
      await store.close();
    }
  }, 120_000);
});
