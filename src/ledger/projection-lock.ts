import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * The 64-bit advisory lock key of a projection, so exactly one live instance applies it: the process holding it in
 * `pg_locks` (a session of its own, named by the process's `application_name`) is the one applying the projection.
 */
export function projectionLockKey(name: string): bigint {
  return createHash('sha256').update(`fleet-ledger projection ${name}`).digest().readBigInt64BE(0);
}

/** Takes the projection's session advisory lock on `client` if no other session holds it; true when taken. */
export async function tryLockProjection(client: pg.Client, name: string): Promise<boolean> {
  const locked = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [projectionLockKey(name).toString()]);
  return locked.rows[0]?.locked === true;
}

/** This instance's lock on a projection went with its connection: another instance may apply it now. */
export class LockLostError extends Error {}
