import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { boundedConnection } from '../ledger/index.js';
import { leaseSlotWidth } from '../poller/index.js';
import { assignShards, shardOf, siteOfShard, type ShardConfig } from './shards.js';
import { within } from '../within.js';

export interface ClusterMemberOptions {
  /**
   * Where the leases live. Give a connection string and the member opens a small pool of its own (two connections):
   * leases must be renewed on time even while the ledger's own pool is queued deep (a fleet registering, a burst of
   * appends). A pool given is used as it is (tests).
   */
  connectionString?: string;
  pool?: pg.Pool;
  /** Unique per process (default `<host>:<pid>:<random>`, so a restarted process is a new member). */
  processId?: string;
  /** Where this process's API answers (shown by `/v1/cluster`). */
  apiUrl?: string;
  /** Shards or sites this process polls, and only these (`--shards`); default: a fair share of the unpinned ones. */
  pinned?: readonly string[];
  shards?: ShardConfig;
  /** How long a lease (and a heartbeat) lasts without renewal (default 15 s). */
  leaseTtlMs?: number;
  /** How often leases are renewed and the assignment recomputed (default a third of the TTL). */
  renewEveryMs?: number;
  /**
   * How long past an expired lease's end the next owner waits before its first request: the old owner sends nothing
   * after its own (earlier) view of that end, so this covers clock-rate differences and a request being written when
   * the lease ran out (default 2 s).
   */
  handoverGraceMs?: number;
  clock?: () => number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** A shard's lease was acquired; polling may start at `pollAfter` (this process's clock). */
  onAcquired?: (shard: string, lease: HeldLease) => void;
  /** A shard is to be handed to another process: stop visiting its BMCs, flush what was recorded, then resolve. */
  onRelease?: (shard: string) => Promise<void>;
  /**
   * How long a hand-over waits for `onRelease` (default the lease's TTL). Past it, the lease is no longer renewed and
   * is left to run out, as after a crash: a visit that does not end when cut holds nobody's shard for longer, and this
   * process's requests to it are refused from its own view of the lease's end.
   */
  drainBoundMs?: number;
  /** A shard's lease was lost (taken over, or it could not be renewed in time): stop at once. */
  onLost?: (shard: string, reason: string) => void;
  /** Where the held leases are mirrored for another thread (`ThreadedClusterMember`): a slot per shard. */
  shared?: { slots: BigInt64Array; slotOf: (shard: string) => number };
}

export interface HeldLease {
  shard: string;
  site: string;
  epoch: number;
  /** This process's clock: no request to the shard's BMCs before (the previous owner's lease plus the grace). */
  pollAfter: number;
  /** This process's clock: no request after, unless renewed meanwhile. */
  validUntil: number;
  previousOwner: string | null;
  /** `new` (never held), `released` (handed over by its owner), `expired` (its owner stopped renewing). */
  reason: 'new' | 'released' | 'expired';
  draining: boolean;
}

export interface ClusterStats {
  processId: string;
  held: number;
  acquired: number;
  takeovers: number;
  released: number;
  lost: number;
  renewFailures: number;
  /** Hand-overs whose drain did not end within `drainBoundMs`: their leases were left to run out. */
  drainsAbandoned: number;
}

/**
 * One process's membership in the cluster of poller processes sharing a database. Every `renewEveryMs` it heartbeats,
 * renews the leases it holds, computes who should poll what (`assignShards`, from the live members and the leases),
 * acquires the shards that fall to it once they are free (never held, released, or expired), and hands over the ones
 * that fall to another (drain, then release). Leases live in `cluster_leases` with the database's clock; the fencing
 * epoch grows at every acquisition and every append made under a lease carries it (the ledger refuses a stale one).
 *
 * Session limits across a hand-over: a released lease is taken at once and polled `handoverGraceMs` after the release
 * (its owner's visits have ended, but a request it cut short may still be read by a busy BMC for a moment: seen once in
 * CI as a request of the new owner arriving 8 ms after the old owner's aborted one); an expired one only after its end
 * plus `handoverGraceMs`, since its owner stops sending requests at its own view of that end (`validUntil`, measured
 * from when it sent the renewal, so never later than the database's).
 */
export class ClusterMember {
  readonly processId: string;
  readonly #options: ClusterMemberOptions;
  readonly #pool: pg.Pool;
  readonly #ownPool: boolean;
  readonly #ttl: number;
  readonly #renewEvery: number;
  readonly #grace: number;
  readonly #clock: () => number;
  readonly #held = new Map<string, HeldLease>();
  /** Shards known from the fleet (site of each). */
  readonly #known = new Map<string, string>();
  #timer: NodeJS.Timeout | null = null;
  #soon: NodeJS.Timeout | null = null;
  #tick: Promise<void> | null = null;
  #stopped = false;
  readonly #handovers = new Map<string, Promise<void>>();
  readonly stats: ClusterStats;

  constructor(options: ClusterMemberOptions) {
    this.#options = options;
    if (options.pool) {
      this.#pool = options.pool;
      this.#ownPool = false;
    } else if (options.connectionString) {
      // A statement that outlives a lease is no use: bounded by it, so a stalled database ends the round, not the member.
      this.#pool = new pg.Pool({ ...boundedConnection(options.connectionString), max: 2, application_name: 'fleet-ledger cluster', statement_timeout: options.leaseTtlMs ?? 15_000 });
      this.#pool.on('error', () => undefined);
      // A connection lost while checked out between two statements: the statement after fails (a failed round), the
      // thread does not die of an unhandled 'error' event.
      this.#pool.on('connect', (client) => client.on('error', () => undefined));
      this.#ownPool = true;
    } else {
      throw new Error('ClusterMember needs a connectionString or a pool');
    }
    this.processId = options.processId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.#ttl = options.leaseTtlMs ?? 15_000;
    this.#renewEvery = options.renewEveryMs ?? Math.max(100, Math.floor(this.#ttl / 3));
    this.#grace = options.handoverGraceMs ?? 2_000;
    this.#clock = options.clock ?? Date.now;
    this.stats = { processId: this.processId, held: 0, acquired: 0, takeovers: 0, released: 0, lost: 0, renewFailures: 0, drainsAbandoned: 0 };
  }

  /** The shard of a node, registering the shard as one to be polled. */
  shardOf(site: string, nodeId: string): string {
    const shard = shardOf(site, nodeId, this.#options.shards);
    this.knowShard(shard, site);
    return shard;
  }

  /** Registers a shard as one to be polled (a site seen in the fleet). */
  knowShard(shard: string, site: string): void {
    if (!this.#known.has(shard)) {
      this.#known.set(shard, site);
      // A shard nobody polls yet (a site just registered): a round soon, not at the next renewal.
      if (this.#timer && !this.#soon) {
        this.#soon = setTimeout(() => {
          this.#soon = null;
          void this.#runTick();
        }, 100);
      }
    }
  }

  /** Mirrors a shard's lease (or its absence) into shared memory, for the thread that polls. */
  #publish(shard: string): void {
    const shared = this.#options.shared;
    if (!shared) return;
    const at = shared.slotOf(shard) * leaseSlotWidth;
    const held = this.#held.get(shard);
    // validUntil first to zero, so a reader never pairs a new epoch with an old validity.
    Atomics.store(shared.slots, at + 2, 0n);
    if (!held) return;
    Atomics.store(shared.slots, at, BigInt(held.epoch));
    Atomics.store(shared.slots, at + 1, BigInt(Math.ceil(held.pollAfter)));
    Atomics.store(shared.slots, at + 3, held.draining ? 1n : 0n);
    Atomics.store(shared.slots, at + 2, BigInt(Math.floor(held.validUntil)));
  }

  /** The lease under which a request to the shard's BMCs may be sent now, or null. */
  lease(shard: string, now = this.#clock()): { shard: string; epoch: number } | null {
    const held = this.#held.get(shard);
    if (!held || held.draining || now < held.pollAfter || now >= held.validUntil) return null;
    return { shard, epoch: held.epoch };
  }

  /** May a request be sent now under this epoch of the shard (the drivers' guard)? */
  mayRequest(shard: string, epoch: number): boolean {
    const held = this.#held.get(shard);
    const now = this.#clock();
    return held !== undefined && held.epoch === epoch && now >= held.pollAfter && now < held.validUntil;
  }

  /** The leases held, for status pages. */
  held(): HeldLease[] {
    return [...this.#held.values()].map((lease) => ({ ...lease }));
  }

  /** The ledger refused an append under this epoch: the shard was taken over. */
  fenced(shard: string, epoch: number): void {
    const held = this.#held.get(shard);
    if (held && held.epoch === epoch) this.#lose(shard, 'an append under its epoch was refused (LEDGER_STALE_EPOCH)');
  }

  async start(): Promise<void> {
    await this.#runTick();
    this.#timer = setInterval(() => {
      this.#expireLocally(); // even while a round is stuck on the database
      void this.#runTick();
    }, this.#renewEvery);
  }

  /** Runs one round now (tests; after the fleet's shards became known). */
  async tickNow(): Promise<void> {
    await this.#runTick();
  }

  #runTick(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    this.#tick ??= this.#round()
      .catch((error: unknown) => {
        this.stats.renewFailures += 1;
        this.#options.log?.('cluster round failed; leases are kept until they run out', { error: String(error) });
        this.#expireLocally();
      })
      .finally(() => {
        this.#tick = null;
      });
    return this.#tick;
  }

  /** Leases whose local end has passed are lost: nothing more is sent under them. */
  #expireLocally(): void {
    const now = this.#clock();
    for (const [shard, held] of this.#held) if (now >= held.validUntil) this.#lose(shard, 'not renewed before it ran out (database unreachable, or this process paused)');
  }

  #lose(shard: string, reason: string): void {
    if (!this.#held.delete(shard)) return;
    this.#publish(shard);
    this.stats.lost += 1;
    this.stats.held = this.#held.size;
    this.#options.log?.('poll lease lost', { shard, reason });
    this.#options.onLost?.(shard, reason);
  }

  #lastRound = 0;

  async #round(): Promise<void> {
    const pool = this.#pool;
    const sent = this.#clock();
    const since = this.#lastRound ? sent - this.#lastRound : 0;
    this.#lastRound = sent;
    if (since > 2 * this.#renewEvery) this.#options.log?.('cluster round late', { sinceLastMs: since, renewEveryMs: this.#renewEvery });
    try {
      await this.#roundBody(pool, sent);
    } finally {
      const took = this.#clock() - sent;
      if (took > this.#renewEvery) this.#options.log?.('cluster round slow', { tookMs: took });
    }
  }

  async #roundBody(pool: pg.Pool, sent: number): Promise<void> {
    this.#expireLocally();
    const ttl = `${this.#ttl} milliseconds`;
    await pool.query(
      `INSERT INTO cluster_members (process_id, host, pid, api_url, pinned_shards, expires_at) VALUES ($1, $2, $3, $4, $5, now() + $6::interval)
       ON CONFLICT (process_id) DO UPDATE SET heartbeat_at = now(), expires_at = now() + $6::interval, api_url = excluded.api_url`,
      [this.processId, hostname(), process.pid, this.#options.apiUrl ?? null, this.#options.pinned ? [...this.#options.pinned] : null, ttl],
    );
    if (this.#known.size > 0) {
      await pool.query(`INSERT INTO cluster_leases (shard, site) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (shard) DO NOTHING`, [[...this.#known.keys()], [...this.#known.values()]]);
    }
    // Renew what is held (draining ones too: their visits are ending under them).
    if (this.#held.size > 0) {
      const renewed = await pool.query<{ shard: string; epoch: string }>(
        `UPDATE cluster_leases SET expires_at = now() + $3::interval, renewed_at = now() WHERE shard = ANY($1::text[]) AND owner = $2 AND NOT released RETURNING shard, epoch`,
        [[...this.#held.keys()], this.processId, ttl],
      );
      const epochs = new Map(renewed.rows.map((row) => [row.shard, Number(row.epoch)]));
      for (const [shard, held] of [...this.#held]) {
        if (epochs.get(shard) === held.epoch) {
          held.validUntil = sent + this.#ttl;
          this.#publish(shard);
        } else this.#lose(shard, 'taken over by another process');
      }
    }
    // Members gone for an hour (SIGKILLed, host lost) leave the table; until then `/v1/cluster` shows them dead.
    await pool.query(`DELETE FROM cluster_members WHERE expires_at < now() - interval '1 hour'`);
    const members = await pool.query<{ process_id: string; pinned_shards: string[] | null }>(`SELECT process_id, pinned_shards FROM cluster_members WHERE expires_at > now()`);
    const leases = await pool.query<{ shard: string; owner: string | null; live: boolean }>(`SELECT shard, owner, (NOT released AND expires_at > now()) AS live FROM cluster_leases`);
    const shards = [...new Set([...this.#known.keys(), ...leases.rows.map((row) => row.shard)])];
    const assignment = assignShards(
      shards,
      members.rows.map((row) => ({ processId: row.process_id, pinned: row.pinned_shards })),
      leases.rows.map((row) => ({ shard: row.shard, owner: row.owner, live: row.live === true })),
    );
    for (const [shard, owner] of assignment) {
      if (owner !== this.processId || this.#held.has(shard) || this.#stopped) continue;
      await this.#acquire(shard, sent);
    }
    for (const [shard, held] of this.#held) {
      if (assignment.get(shard) !== this.processId && !held.draining) this.#startHandOver(shard, held);
    }
  }

  async #acquire(shard: string, sent: number): Promise<void> {
    const site = this.#known.get(shard) ?? siteOfShard(shard);
    await this.#pool.query(`INSERT INTO cluster_leases (shard, site) VALUES ($1, $2) ON CONFLICT (shard) DO NOTHING`, [shard, site]);
    const taken = await this.#pool.query<{ epoch: string; previous_owner: string | null; reason: HeldLease['reason']; wait_ms: number }>(
      `WITH old AS (SELECT shard, owner, released, expires_at FROM cluster_leases WHERE shard = $1 FOR UPDATE)
       UPDATE cluster_leases l SET owner = $2, epoch = l.epoch + 1, acquired_at = now(), renewed_at = now(), expires_at = now() + $3::interval,
         poll_after = CASE WHEN old.owner IS NULL THEN now() ELSE greatest(now(), old.expires_at + $4::interval) END,
         previous_owner = old.owner, released = false, handovers = l.handovers + CASE WHEN old.owner IS NULL THEN 0 ELSE 1 END
       FROM old
       WHERE l.shard = old.shard AND (old.owner IS NULL OR old.released OR old.expires_at < now())
       RETURNING l.epoch, old.owner AS previous_owner,
         CASE WHEN old.owner IS NULL THEN 'new' WHEN old.released THEN 'released' ELSE 'expired' END AS reason,
         (extract(epoch FROM (l.poll_after - now())) * 1000)::float8 AS wait_ms`,
      [shard, this.processId, `${this.#ttl} milliseconds`, `${this.#grace} milliseconds`],
    );
    const row = taken.rows[0];
    if (!row) return; // held by a live owner: it hands over (or runs out) first
    const lease: HeldLease = {
      shard,
      site,
      epoch: Number(row.epoch),
      pollAfter: sent + Math.max(0, row.wait_ms),
      validUntil: sent + this.#ttl,
      previousOwner: row.previous_owner,
      reason: row.reason,
      draining: false,
    };
    this.#held.set(shard, lease);
    this.#publish(shard);
    this.stats.acquired += 1;
    if (lease.reason === 'expired') this.stats.takeovers += 1;
    this.stats.held = this.#held.size;
    this.#options.log?.('poll lease acquired', { shard, epoch: lease.epoch, reason: lease.reason, previousOwner: lease.previousOwner, waitMs: Math.round(lease.pollAfter - sent) });
    this.#options.onAcquired?.(shard, { ...lease });
  }

  #startHandOver(shard: string, held: HeldLease): Promise<void> {
    const running = this.#handOver(shard, held).finally(() => this.#handovers.delete(shard));
    this.#handovers.set(shard, running);
    return running;
  }

  async #handOver(shard: string, held: HeldLease): Promise<void> {
    held.draining = true;
    this.#publish(shard);
    const drained = (async () => {
      try {
        await this.#options.onRelease?.(shard);
      } catch (error) {
        this.#options.log?.('draining a shard failed; released all the same once its visits ended', { shard, error: String(error) });
      }
      return true;
    })();
    const boundMs = this.#options.drainBoundMs ?? this.#ttl;
    if (await within(drained, boundMs)) {
      await this.#release(shard, held);
      return;
    }
    // Not released: the next owner would poll at once beside a visit still running. Not renewed either: the lease
    // runs out, and the next owner starts its grace after that end.
    this.#options.log?.('a shard did not drain in time: its lease is left to run out, as after a crash', { shard, epoch: held.epoch, boundMs });
    this.stats.drainsAbandoned += 1;
    if (this.#held.get(shard) === held) {
      this.#held.delete(shard);
      this.#publish(shard);
    }
    this.stats.held = this.#held.size;
  }

  async #release(shard: string, held: HeldLease): Promise<void> {
    try {
      await this.#pool.query(`UPDATE cluster_leases SET released = true, expires_at = now() WHERE shard = $1 AND owner = $2 AND epoch = $3`, [shard, this.processId, held.epoch]);
      this.stats.released += 1;
    } catch (error) {
      this.#options.log?.('could not release a poll lease; it runs out instead', { shard, error: String(error) });
    }
    if (this.#held.get(shard) === held) {
      this.#held.delete(shard);
      this.#publish(shard);
    }
    this.stats.held = this.#held.size;
  }

  /**
   * Leaves the cluster: every shard is drained (`onRelease`) and released, so the others take them over at once, and
   * the membership row is removed.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    if (this.#soon) clearTimeout(this.#soon);
    await this.#tick?.catch(() => undefined);
    await Promise.all([...this.#held].map(([shard, held]) => (held.draining ? Promise.resolve() : this.#startHandOver(shard, held))));
    await Promise.all([...this.#handovers.values()]);
    await this.#pool.query(`DELETE FROM cluster_members WHERE process_id = $1`, [this.processId]).catch(() => undefined);
    if (this.#ownPool) await this.#pool.end().catch(() => undefined);
  }
}

/** What the API and the poller know of a process's membership, kept in this thread or in one of its own. */
export interface ClusterMembership {
  readonly processId: string;
  /** This process's counts (a thread's, as last reported by it). */
  readonly stats?: ClusterStats;
  held(): HeldLease[];
  shardOf(site: string, nodeId: string): string;
  mayRequest(shard: string, epoch: number): boolean;
  fenced(shard: string, epoch: number): void;
}
