import { Counter, Gauge } from 'prom-client';
import { pushGapKinds } from '../../../events/index.js';
import { mirror } from './mirror.js';
import type { MetricsContext, Registers } from './metrics-context.js';

/** Push (`docs/push.md`): streams held, streams opened, events recorded and dropped as duplicates, gaps by kind. */
export function registerPushMetrics(ctx: MetricsContext, registers: Registers): void {
  const push = () => ctx.poller?.stats().push;
  new Gauge({ name: 'fleet_ledger_push_streams_open', help: 'SSE streams held to BMCs now (each holds one of its BMC\'s sessions)', registers, collect() { const p = push(); if (p) this.set(p.streamsOpen); } });
  const seen = new Map<string, number>();
  new Counter({ name: 'fleet_ledger_push_streams_opened_total', help: 'SSE streams opened (first subscriptions and re-subscriptions after a gap)', registers, collect() { const p = push(); if (p) mirror(this, seen, 'opened', p.streamsOpened); } });
  new Counter({ name: 'fleet_ledger_push_events_total', help: 'Pushed events recorded (each once), for events per second', registers, collect() { const p = push(); if (p) mirror(this, seen, 'events', p.eventsRecorded); } });
  new Counter({ name: 'fleet_ledger_push_duplicates_dropped_total', help: 'Pushed events dropped because the same event was already recorded', registers, collect() { const p = push(); if (p) mirror(this, seen, 'duplicates', p.duplicatesDropped); } });
  new Counter({
    name: 'fleet_ledger_push_gaps_total',
    help: 'Push gaps recorded, by kind (silent, subscription-lost, stalled, refused, ended): each put its node back on polling',
    labelNames: ['kind'] as const,
    registers,
    collect() {
      const p = push();
      if (p) for (const kind of pushGapKinds) mirror(this, seen, `gap:${kind}`, p.gaps[kind], { kind });
    },
  });
}
