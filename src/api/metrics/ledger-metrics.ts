import { Counter, Gauge } from 'prom-client';
import { mirror } from './mirror.js';
import type { MetricsContext, Registers } from './metrics-context.js';

/** The store: appends and group commits (mirrored from the store's own counters), the head, and whether PostgreSQL answers. */
export function registerLedgerMetrics(ctx: MetricsContext, registers: Registers): void {
  const appendsSeen = new Map<string, number>();
  new Counter({ name: 'fleet_ledger_appends_total', help: 'Append calls committed by this process (group commit members)', registers, collect() { mirror(this, appendsSeen, 'appends', ctx.store.stats.appends); } });
  new Counter({ name: 'fleet_ledger_events_appended_total', help: 'Events written by this process (idempotent replays excluded)', registers, collect() { mirror(this, appendsSeen, 'events', ctx.store.stats.events); } });
  new Counter({ name: 'fleet_ledger_group_commit_batches_total', help: 'Group-commit transactions committed by this process', registers, collect() { mirror(this, appendsSeen, 'batches', ctx.store.stats.batches); } });
  new Counter({ name: 'fleet_ledger_group_commit_one_round_trip_total', help: 'Group-commit transactions committed in one round trip (this process had written the head last)', registers, collect() { mirror(this, appendsSeen, 'oneRoundTrip', ctx.store.stats.oneRoundTripBatches); } });
  new Counter({ name: 'fleet_ledger_group_commit_guess_misses_total', help: 'One-round-trip attempts that found the log moved (nothing written; the batch then took two round trips)', registers, collect() { mirror(this, appendsSeen, 'misses', ctx.store.stats.speculationMisses); } });
  new Gauge({ name: 'fleet_ledger_group_commit_last_batch_appends', help: 'Append calls coalesced into the last group-commit transaction', registers, collect() { this.set(ctx.store.stats.lastBatchAppends); } });
  new Gauge({ name: 'fleet_ledger_group_commit_max_batch_appends', help: 'Most append calls coalesced into one group-commit transaction so far', registers, collect() { this.set(ctx.store.stats.maxBatchAppends); } });
  new Gauge({
    name: 'fleet_ledger_head_position',
    help: 'Global position of the last committed event',
    registers,
    async collect() {
      // While PostgreSQL is away the head is unknown (NaN), and the scrape still answers: every other figure, and
      // `fleet_ledger_store_up` 0, are what an operator needs most then.
      this.set(await ctx.store.head().then((head) => head.position, () => Number.NaN));
    },
  });
  new Gauge({
    name: 'fleet_ledger_store_up',
    help: '1 when the ledger\'s PostgreSQL answers this scrape; 0 while it is away (appends are refused as retryable, followers wait)',
    registers,
    async collect() {
      this.set(await ctx.store.head().then(() => 1, () => 0));
    },
  });
}
