import { Gauge } from 'prom-client';
import type { MetricsContext, Registers } from './metrics-context.js';

/** The transparency log: how far the Merkle tree trails the head, the integrity alarm, and the newest signed tree size. */
export function registerAuditMetrics(ctx: MetricsContext, registers: Registers): void {
  new Gauge({
    name: 'fleet_ledger_merkle_lag_positions',
    help: 'Events committed but not yet folded into the Merkle tree (the follower\'s lag); absent without the audit service',
    registers,
    collect() {
      if (ctx.audit) this.set(ctx.audit.follower.status.lagPositions);
    },
  });
  new Gauge({
    name: 'fleet_ledger_integrity_alarm',
    help: 'Critical: 1 while the log disagrees with its Merkle tree or a published checkpoint (signing stopped), by finding code; absent without the audit service',
    labelNames: ['code'] as const,
    registers,
    collect() {
      this.reset();
      const alarm = ctx.audit?.integrity.status.alarm;
      if (alarm) this.set({ code: alarm.code }, 1);
    },
  });
  new Gauge({
    name: 'fleet_ledger_checkpoint_tree_size',
    help: 'Tree size of the newest checkpoint this process signed',
    registers,
    collect() {
      if (ctx.audit) this.set(ctx.audit.checkpointer.status.lastSize);
    },
  });
}
