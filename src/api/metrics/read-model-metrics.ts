import { Gauge } from 'prom-client';
import { livenessStateCounts, openAlarmCountsByKind } from '../../../projections/index.js';
import type { MetricsContext, Registers } from './metrics-context.js';

/** The fleet as its read models show it: dark nodes and open alarms. */
export function registerReadModelMetrics(ctx: MetricsContext, registers: Registers): void {
  new Gauge({
    name: 'fleet_ledger_dark_nodes',
    help: 'Nodes in the dark liveness state',
    registers,
    async collect() {
      const states = await livenessStateCounts(ctx.db).catch(() => null);
      this.set(states?.dark ?? 0);
    },
  });
  new Gauge({
    name: 'fleet_ledger_open_alarms',
    help: 'Open top-level alarms by kind (node alarms folded under a root cause are not counted)',
    labelNames: ['kind'] as const,
    registers,
    async collect() {
      this.reset();
      const rows = await openAlarmCountsByKind(ctx.db).catch(() => null);
      for (const row of rows ?? []) this.set({ kind: row.kind }, row.n);
    },
  });
}
