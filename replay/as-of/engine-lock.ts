/**
 * The lock an as-of engine holds for as long as it lives: a session advisory lock (`asOfLockSpace`, the engine key) on
 * a connection of its own. Other engines read liveness from `pg_locks`: when the process dies, PostgreSQL ends its
 * session and releases the lock, and the next sweep drops the views the process left. If the connection is lost while
 * the process lives (a database restart), `ensure` takes the lock again; views dropped meanwhile by another engine's
 * sweep are rebuilt by the next question that needs them.
 */
import pg from 'pg';
import { asOfLockSpace } from './as-of-storage.js';

export class EngineLock {
  #client: pg.Client | null = null;
  #closed = false;

  constructor(
    private readonly connectionString: string,
    readonly key: number,
    private readonly log: (message: string, fields?: Record<string, unknown>) => void,
  ) {}

  /** Takes the lock (or checks it is still held); throws if another session holds this key. */
  async ensure(): Promise<void> {
    if (this.#client || this.#closed) return;
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on('error', (error) => {
      this.log('as-of engine lock connection lost; taken again at the next sweep', { error: String(error) });
      if (this.#client === client) this.#client = null;
      void client.end().catch(() => undefined);
    });
    await client.connect();
    try {
      const result = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS locked', [asOfLockSpace, this.key]);
      if (!result.rows[0]?.locked) throw new Error(`as-of engine key ${this.key} is held by another session`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.#client = client;
  }

  async release(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => undefined);
  }
}
