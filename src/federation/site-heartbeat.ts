/**
 * A site's heartbeat: at its interval, a `SiteHeartbeat` event in the site's own log (stream `site-<name>`), carrying
 * the state of the replication slots that hold the site's backlog for the centre. The centre hears the site through
 * these: after two intervals without one it shows the site partitioned since the last it received (src/federation/
 * centre.ts). The site watches its own slots too: when one holds more than `warnShare` of the bound
 * (`max_slot_wal_keep_size`), a `SiteReplicationBacklogWarned` is recorded once (and again only after the slot fell
 * back under half the threshold), on the site, where someone can act while the centre cannot hear.
 */
import type { EventStore } from '../ledger/index.js';
import { siteName, siteStream } from './site-names.js';

export interface SlotStatus {
  slot: string;
  walStatus: string | null;
  retainedBytes: number;
  safeWalBytes: number | null;
  limitBytes: number | null;
  active: boolean;
}

export interface SiteHeartbeatOptions {
  store: EventStore;
  site: string;
  intervalS: number;
  /** Share of the bound at which a slot is warned about (default 0.5: well before it is exceeded). */
  warnShare?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

const actor = { kind: 'system', id: 'site-heartbeat' } as const;

/** The logical replication slots of the site's server and what each holds back. */
export async function readSlots(store: EventStore): Promise<SlotStatus[]> {
  const { rows } = await store.pool.query<{ slot_name: string; wal_status: string | null; retained: string | null; safe_wal_size: string | null; limit_bytes: string | null; active: boolean }>(`
    SELECT slot_name, wal_status, active,
           greatest(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn), 0)::bigint AS retained,
           safe_wal_size,
           CASE WHEN current_setting('max_slot_wal_keep_size') = '-1' THEN NULL
                ELSE pg_size_bytes(current_setting('max_slot_wal_keep_size')) END AS limit_bytes
      FROM pg_replication_slots
     WHERE slot_type = 'logical'
     ORDER BY slot_name`);
  return rows.map((row) => ({
    slot: row.slot_name,
    walStatus: row.wal_status,
    retainedBytes: Number(row.retained ?? 0),
    safeWalBytes: row.safe_wal_size === null ? null : Number(row.safe_wal_size),
    limitBytes: row.limit_bytes === null ? null : Number(row.limit_bytes),
    active: row.active,
  }));
}

/** The share of its bound a slot holds (0 when unbounded); 1 when lost. */
export function slotShare(slot: SlotStatus): number {
  if (slot.walStatus === 'lost') return 1;
  if (slot.limitBytes === null || slot.limitBytes <= 0) return 0;
  return slot.retainedBytes / slot.limitBytes;
}

export class SiteHeartbeat {
  readonly #options: Required<Omit<SiteHeartbeatOptions, 'log'>> & Pick<SiteHeartbeatOptions, 'log'>;
  #timer: NodeJS.Timeout | null = null;
  #beating: Promise<void> = Promise.resolve();
  readonly #warned = new Set<string>();
  beats = 0;
  lastSlots: SlotStatus[] = [];

  constructor(options: SiteHeartbeatOptions) {
    siteName(options.site);
    this.#options = { warnShare: 0.5, ...options };
  }

  /** Beats now, then every interval. */
  start(): void {
    if (this.#timer) return;
    const tick = (): void => {
      this.#beating = this.beat().catch((error: unknown) => this.#options.log?.('site heartbeat failed', { error: String(error) }));
    };
    tick();
    this.#timer = setInterval(tick, this.#options.intervalS * 1000);
    this.#timer.unref();
  }

  /** One heartbeat (and the slot warnings it finds due). */
  async beat(): Promise<void> {
    const { store, site, intervalS, warnShare } = this.#options;
    const slots = await readSlots(store);
    this.lastSlots = slots;
    await store.append(siteStream(site), [{ type: 'SiteHeartbeat', data: { site, intervalS, slots }, actor }]);
    this.beats += 1;
    for (const slot of slots) {
      const share = slotShare(slot);
      if (share >= warnShare && !this.#warned.has(slot.slot)) {
        this.#warned.add(slot.slot);
        const summary =
          slot.walStatus === 'lost'
            ? `replication slot ${slot.slot} is lost: the centre must re-synchronise site ${site} from its log`
            : `replication slot ${slot.slot} holds ${Math.round(share * 100)}% of its bound (${slot.retainedBytes} of ${slot.limitBytes} bytes): the centre has been cut off from site ${site}; past the bound the slot is lost and the centre must re-synchronise`;
        this.#options.log?.(summary, { site, slot });
        await store.append(siteStream(site), [{ type: 'SiteReplicationBacklogWarned', data: { site, slot, threshold: warnShare, summary }, actor }]);
      } else if (share < warnShare / 2) {
        this.#warned.delete(slot.slot);
      }
    }
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#beating;
  }
}
