/**
 * `fleet-ledger start` outlives its database: with PostgreSQL gone (the embedded postmaster shut down immediately, as
 * `pg_ctl stop -m immediate` does; or every connection of a server backend terminated) the process keeps answering,
 * says it is not ready, refuses intents as retryable, and resumes by itself: ready again, intents recorded, poll
 * outcomes appended. The process runs under `--unhandled-rejections=strict`, so a single unhandled rejection on any
 * path of `start` ends it and fails the test.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freshDatabase } from '../support/backends.js';
import { freePort } from '../../bench/support/free-port.js';

const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const token = 'outage-operator-token';
const auditorToken = 'outage-auditor-token';
const analystToken = 'outage-analyst-token';

interface Started {
  url: string;
  output: () => string;
  alive: () => boolean;
  stop: () => Promise<number | null>;
}

async function startLedger(args: string[], env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--unhandled-rejections=strict', '--import', 'tsx', main, 'start', '--port', String(port), ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FLEET_LEDGER_TOKENS: `${token}=olga:operator,${auditorToken}=ada:auditor,${analystToken}=ann:analyst`, ...env },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  let gone = false;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => ((gone = true), resolve(code))));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (gone || Date.now() > deadline) throw new Error(`fleet-ledger start did not come up:\n${output.slice(-3000)}`);
    const ready = await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false);
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    url,
    output: () => output,
    alive: () => !gone,
    async stop() {
      if (gone) return exited;
      process.kill(-child.pid!, 'SIGINT');
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 30_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

async function registerNode(url: string, nodeId: string): Promise<{ status: number; code: string | null }> {
  const response = await fetch(`${url}/v1/nodes`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ nodeId, site: 'ams1', rack: 'r99', bmc: { protocol: 'redfish', address: 'https://10.99.0.1', credentialRef: 'outage' } }),
  });
  const body = (await response.json().catch(() => ({}))) as { error?: { code?: string } };
  return { status: response.status, code: body.error?.code ?? null };
}

async function readiness(url: string): Promise<{ status: number; code: string | null; headPosition: number | null }> {
  const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) });
  const body = (await response.json()) as { headPosition: number | null; error?: { code?: string } };
  return { status: response.status, code: body.error?.code ?? null, headPosition: body.headPosition };
}

async function until<T>(what: string, deadlineMs: number, probe: () => Promise<T | null>, started: Started): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    expect(started.alive(), `the process ended while waiting for ${what}:\n${started.output().slice(-3000)}`).toBe(true);
    const found = await probe().catch(() => null);
    if (found !== null) return found;
    if (Date.now() > deadline) {
      if (process.env.OUTAGE_LOG) writeFileSync(process.env.OUTAGE_LOG, started.output());
      throw new Error(`${what}: not within ${deadlineMs / 1000} s\n${started.output().slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** While the store is away: the process answers, says why it is not ready, and refuses an intent as retryable. */
async function expectUnavailable(started: Started): Promise<void> {
  const gone = await until('readiness to turn not-ready', 15_000, async () => {
    const state = await readiness(started.url);
    return state.status === 503 ? state : null;
  }, started);
  expect(gone.code).toBe('API_NOT_READY');
  const live = await fetch(`${started.url}/healthz`).then((r) => r.status, (error: unknown) => `${String(error)}; the process ${started.alive() ? 'runs' : 'ended'}:\n${started.output().slice(-3000)}`);
  expect(live).toBe(200);
  // The scrape still answers, and says the store is down.
  const scrape = await fetch(`${started.url}/metrics`, { headers: { authorization: `Bearer ${auditorToken}` } });
  expect(scrape.status).toBe(200);
  expect(await scrape.text()).toMatch(/^fleet_ledger_store_up 0$/m);
  const refused = await registerNode(started.url, 'outage-refused');
  expect(refused).toEqual({ status: 503, code: 'LEDGER_STORE_UNAVAILABLE' });
  // Reads say so too, with the same retryable code: the log through the store, a read model straight through pg.
  for (const [path, bearer] of [['/v1/events?limit=1', auditorToken], ['/v1/liveness/summary', analystToken]] as const) {
    const response = await fetch(`${started.url}${path}`, { headers: { authorization: `Bearer ${bearer}` } });
    const body = (await response.json()) as { error?: { code?: string; details?: { retryable?: boolean } } };
    expect({ path, status: response.status, code: body.error?.code, retryable: body.error?.details?.retryable }).toEqual({ path, status: 503, code: 'LEDGER_STORE_UNAVAILABLE', retryable: true });
  }
}

/** After the store is back: ready, an intent recorded, and the poller (when there is one) appends outcomes again. */
async function expectResumed(started: Started, polls: boolean): Promise<{ readyAfterS: number }> {
  const since = Date.now();
  await until('readiness again', 90_000, async () => ((await readiness(started.url)).status === 200 ? true : null), started);
  const readyAfterS = (Date.now() - since) / 1000;
  expect(await (await fetch(`${started.url}/metrics`, { headers: { authorization: `Bearer ${auditorToken}` } })).text()).toMatch(/^fleet_ledger_store_up 1$/m);
  await until('an intent recorded again', 30_000, async () => ((await registerNode(started.url, 'outage-after')).status === 201 ? true : null), started);
  // The Merkle follower is back too: the tree takes in what was appended after the outage.
  const after = (await readiness(started.url)).headPosition!;
  await until('the Merkle tree past the outage', 30_000, async () => {
    const status = (await (await fetch(`${started.url}/v1/audit/status`, { headers: { authorization: `Bearer ${auditorToken}` } })).json()) as { treeSize?: number; followerActive?: boolean };
    return status.followerActive === true && (status.treeSize ?? 0) >= after ? true : null;
  }, started);
  if (polls) {
    const from = (await readiness(started.url)).headPosition! + 1;
    await until('a new poll outcome', 30_000, async () => {
      const page = (await (await fetch(`${started.url}/v1/events?stream=polls-&from=${from}&limit=1`, { headers: { authorization: `Bearer ${auditorToken}` } })).json()) as { items?: unknown[] };
      return page.items && page.items.length > 0 ? true : null;
    }, started);
  }
  return { readyAfterS };
}

describe('fleet-ledger start outlives its database', { timeout: 150_000 }, () => {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('embedded: its postmaster shut down immediately, the process answers 503 meanwhile, starts PostgreSQL again and resumes polling', async () => {
    const began = Date.now();
    const dir = mkdtempSync(join(tmpdir(), 'fleet-ledger-outage-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    chmodSync(dir, 0o755); // as root, the postmaster runs as the postgres user, which must pass through
    const started = await startLedger(['--bmcs', '32', '--interval', '5', '--data-dir', join(dir, 'data')], { DATABASE_URL: '' });
    cleanups.push(() => started.stop());
    expect((await registerNode(started.url, 'outage-before')).status).toBe(201);

    // What `pg_ctl stop -m immediate` does: SIGQUIT to the postmaster, which ends every backend without a checkpoint.
    const postmaster = Number(readFileSync(join(dir, 'data', 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const killedAt = Date.now();
    console.info(`embedded outage: started in ${((killedAt - began) / 1000).toFixed(1)} s`);
    process.kill(postmaster, 'SIGQUIT');
    await expectUnavailable(started);
    const { readyAfterS } = await expectResumed(started, true);
    const resumedS = (Date.now() - killedAt) / 1000;
    const stopping = Date.now();
    expect(started.alive()).toBe(true);
    expect(await started.stop()).toBe(0);
    console.info(`embedded outage: ready again ${readyAfterS.toFixed(1)} s after the first 503, intent and poll outcome recorded ${resumedS.toFixed(1)} s after the kill; stopped in ${((Date.now() - stopping) / 1000).toFixed(1)} s`);
    expect(started.output()).not.toMatch(/unhandled|ECONNRESET at/i);
  });

  const serverUrl = inject('serverAdminUrl');
  it.skipIf(!serverUrl)('server: every connection terminated for a while, the process refuses as retryable and reconnects', async () => {
    const database = await freshDatabase(serverUrl!);
    cleanups.push(() => database.drop());
    const dir = mkdtempSync(join(tmpdir(), 'fleet-ledger-outage-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // Leases shorter than the outage: the process's poll leases run out meanwhile and must be taken again after.
    const started = await startLedger(['--bmcs', '32', '--interval', '5', '--lease-ttl', '2', '--data-dir', join(dir, 'data')], { DATABASE_URL: database.url });
    cleanups.push(() => started.stop());
    expect((await registerNode(started.url, 'outage-before')).status).toBe(201);

    // The database refuses connections (as during a failover) and every session of the process is cut.
    const admin = new pg.Client({ connectionString: serverUrl! });
    await admin.connect();
    const name = new URL(database.url).pathname.slice(1);
    let cutOutput = 0;
    try {
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
      const cutAt = Date.now();
      cutOutput = started.output().length;
      await expectUnavailable(started);
      // Away for a few seconds, as in a failover: every follower of the log meets the loss at least once.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 6_000 - (Date.now() - cutAt))));
      // Cut again while it is retrying, so a half-reconnected pool meets the loss too.
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
    } finally {
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
      await admin.end();
    }
    const { readyAfterS } = await expectResumed(started, true);
    // The poll outcomes after the outage were written under leases taken again (the old ones ran out meanwhile).
    expect(started.output().slice(cutOutput)).toMatch(/polling shard \S+ \(epoch [2-9]/);
    console.info(`server outage: ready again ${readyAfterS.toFixed(1)} s after connections were allowed again`);
    expect(await started.stop()).toBe(0);
  });
});
