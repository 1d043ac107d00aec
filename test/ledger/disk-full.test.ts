/**
 * Fault: the disk of the embedded data folder fills up. A real PostgreSQL on a real (small, tmpfs) filesystem,
 * filled by a file beside it, the way a runaway log or a backup fills a host's disk. Two rules:
 * - below the reserve the ledger keeps, an append is refused with `LEDGER_STORAGE_FULL` (507 over HTTP) naming
 *   the folder and the free space, before PostgreSQL meets the full disk; appends resume once space is freed;
 * - without a reserve PostgreSQL itself hits ENOSPC, cannot write its WAL, aborts every session and cannot start
 *   again while the disk is full: appends fail with a typed, retryable error, the postmaster is started again
 *   once space returns, and every acknowledged event is in the log, the chain intact.
 * Mounting a filesystem needs root: off CI without it the tests are skipped, with that reason in their title.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi, TokenTable } from '../../src/api/index.js';
import { isLedgerError, openLedger, postmasterPid, type OpenLedger } from '../../src/ledger/index.js';

const MiB = 2 ** 20;
const isRoot = process.getuid?.() === 0;
const runnable = isRoot || process.env.CI === 'true';
const title = (name: string) => (isRoot ? name : `${name} (skipped: mounting a small filesystem needs root)`);

function freeBytes(path: string): number {
  const stats = statfsSync(path);
  return Number(stats.bavail) * Number(stats.bsize);
}

/** Fills the disk under `mount` with one file until `leaveBytes` remain free. */
function fillLeaving(mount: string, leaveBytes: number): string {
  const filler = join(mount, `filler-${Date.now()}`);
  const size = Math.max(0, freeBytes(mount) - leaveBytes);
  execFileSync('fallocate', ['-l', String(size), filler]);
  return filler;
}

const cordon = (nodeId: string, reason = 'x'.repeat(450)) => ({ type: 'NodeCordoned', data: { nodeId, reason }, actor: { kind: 'system' as const, id: 'disk-full-test' } });

async function expectEveryAcknowledgedEvent(ledger: OpenLedger, acknowledged: Set<string>): Promise<number> {
  const stored = new Set<string>();
  for (let from = 1; ; ) {
    const page = await ledger.store.readAll({ fromPosition: from, limit: 5000 });
    if (page.length === 0) break;
    for (const event of page) stored.add(event.eventId);
    from = page[page.length - 1]!.position + 1;
  }
  const lost = [...acknowledged].filter((id) => !stored.has(id));
  expect(lost, `${lost.length} acknowledged events missing`).toEqual([]);
  const verified = await ledger.store.verifyChain();
  expect(verified.ok, JSON.stringify(verified)).toBe(true);
  return stored.size;
}

describe.skipIf(!runnable)(title('a full disk under the embedded data folder'), () => {
  let mount: string;
  const ledgers: OpenLedger[] = [];

  beforeAll(() => {
    if (!isRoot) throw new Error('mounting a small filesystem for the disk-full test needs root; CI runs as root');
    mount = mkdtempSync(join(tmpdir(), 'fleet-ledger-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256m,mode=0755', 'tmpfs', mount]);
  });
  afterAll(async () => {
    for (const ledger of ledgers) await ledger.close().catch(() => undefined);
    if (mount) {
      execFileSync('umount', ['-l', mount]);
      rmSync(mount, { recursive: true, force: true });
    }
  });

  it('below the reserve an append is refused with LEDGER_STORAGE_FULL (507) naming the folder and the free space, nothing acknowledged is lost, and appends resume once space is freed', async () => {
    const dataDir = join(mount, 'reserve');
    mkdirSync(dataDir);
    const ledger = await openLedger({ dataDir, minFreeBytes: 48 * MiB });
    ledgers.push(ledger);
    const acknowledged = new Set<string>();
    for (let index = 0; index < 20; index += 1) {
      const result = await ledger.store.append(`node-n${index}`, Array.from({ length: 10 }, () => cordon(`n${index}`)));
      expect(result.positions).toHaveLength(10);
    }
    for (const event of await ledger.store.readAll({ limit: 1000 })) acknowledged.add(event.eventId);
    expect(acknowledged.size).toBe(200);

    const filler = fillLeaving(mount, 40 * MiB);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the reserve is looked at every 250 ms
    const refused = await ledger.store.append('node-n0', [cordon('n0')]).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isLedgerError(refused) && refused.code).toBe('LEDGER_STORAGE_FULL');
    const error = refused as { details: { location: string; freeBytes: number; minFreeBytes: number }; retryable: boolean; message: string };
    expect(error.retryable).toBe(true);
    expect(error.details.location).toBe(dataDir);
    expect(error.details.freeBytes).toBeLessThan(48 * MiB);
    expect(error.details.minFreeBytes).toBe(48 * MiB);
    expect(error.message).toMatch(/MiB free, below the 48\.0 MiB kept for PostgreSQL/);

    // Over HTTP an intent that would change the node (n0 is cordoned: uncordon) gets 507 with the code and whether to retry; the API keeps answering reads.
    const tokens = new TokenTable([
      { token: 'disk-full-operator-token', principal: 'alice', role: 'operator' },
      { token: 'disk-full-auditor-token', principal: 'carol', role: 'auditor' },
    ]);
    const app = await buildApi({ store: ledger.store, tokens });
    try {
      const answer = await app.inject({ method: 'POST', url: '/v1/nodes/n0/uncordon', headers: { authorization: 'Bearer disk-full-operator-token' }, payload: { reason: 'disk full' } });
      expect(answer.statusCode).toBe(507);
      expect(answer.json().error).toMatchObject({ code: 'LEDGER_STORAGE_FULL', details: { retryable: true } });
      expect((await app.inject({ method: 'GET', url: '/v1/events?limit=1', headers: { authorization: 'Bearer disk-full-auditor-token' } })).statusCode).toBe(200);
    } finally {
      await app.close();
      rmSync(filler);
    }

    await new Promise((resolve) => setTimeout(resolve, 300));
    const resumed = await ledger.store.append('node-n0', [cordon('n0')]);
    expect(resumed.positions).toEqual([201]);
    expect(await expectEveryAcknowledgedEvent(ledger, acknowledged)).toBe(201);
  }, 120_000);

  it('without a reserve PostgreSQL meets the full disk: appends fail typed and retryable, the postmaster is started again once space returns, and every acknowledged event is in the log', async () => {
    const dataDir = join(mount, 'no-reserve');
    mkdirSync(dataDir);
    const messages: string[] = [];
    const ledger = await openLedger({ dataDir, minFreeBytes: 0, commitResolutionMs: 3_000, log: (message) => messages.push(message) });
    ledgers.push(ledger);
    const acknowledged = new Set<string>();
    const record = async (stream: string, count: number) => {
      const events = Array.from({ length: count }, () => ({ ...cordon(stream.slice(5)), eventId: crypto.randomUUID() }));
      await ledger.store.append(stream, events);
      for (const event of events) acknowledged.add(event.eventId);
    };
    for (let index = 0; index < 10; index += 1) await record(`node-n${index}`, 10);

    const filler = fillLeaving(mount, 2 * MiB);
    let refused: unknown;
    for (let attempt = 0; attempt < 2_000 && refused === undefined; attempt += 1) {
      await record(`node-n${attempt % 10}`, 20).catch((error: unknown) => (refused = error));
    }
    // PostgreSQL's disk_full (a relation it cannot extend, or WAL it cannot write) is told apart from an outage.
    expect(refused).toMatchObject({ code: 'LEDGER_STORAGE_FULL', retryable: true, details: { location: dataDir, minFreeBytes: 0 } });

    // On ENOSPC in its WAL PostgreSQL aborts every session and restarts, and its crash recovery fails while the disk
    // is full: the postmaster is gone. That crash is made certain here (the first error above may have come from a
    // table it could not extend, which it survives): the postmaster is killed while the disk is full.
    const clusterDir = join(dataDir, 'pg');
    const pid = postmasterPid(clusterDir);
    if (pid !== null) process.kill(pid, 'SIGKILL');
    const failedRestart = async () => {
      for (let waited = 0; waited < 30_000; waited += 200) {
        if (messages.some((message) => /did not start again/.test(message))) return true;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      return false;
    };
    expect(await failedRestart(), messages.slice(-8).join('\n')).toBe(true);
    // While the disk is full every append fails, typed and retryable; nothing is acknowledged that is not stored.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await expect(record('node-n0', 1)).rejects.toMatchObject({ retryable: true });
    }

    rmSync(filler);
    const freedAt = Date.now();
    let resumedAfterMs: number | undefined;
    while (Date.now() - freedAt < 60_000) {
      try {
        await record('node-n0', 1);
        resumedAfterMs = Date.now() - freedAt;
        break;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    expect(resumedAfterMs, messages.slice(-8).join('\n')).toBeDefined();
    expect(messages.some((message) => /started again/.test(message))).toBe(true);
    const stored = await expectEveryAcknowledgedEvent(ledger, acknowledged);
    console.log(JSON.stringify({ acknowledged: acknowledged.size, stored, firstRefusal: (refused as { message: string }).message.slice(0, 160), resumedAfterMs }));
  }, 180_000);
});
