import { Counter, Gauge } from 'prom-client';
import { mirror } from './mirror.js';
import type { MetricsContext, Registers } from './metrics-context.js';

/** The poller of this process: outcomes, visits, targets by state, and the few targets failing longest. */
export function registerPollerMetrics(ctx: MetricsContext, registers: Registers): void {
  const pollsSeen = new Map<string, number>();
  new Counter({
    name: 'fleet_ledger_polls_total',
    help: 'Poll outcomes recorded by the poller, by outcome',
    labelNames: ['outcome'] as const,
    registers,
    collect() {
      for (const [outcome, count] of Object.entries(ctx.poller?.stats().outcomes ?? {})) mirror(this, pollsSeen, outcome, count, { outcome });
    },
  });
  new Gauge({ name: 'fleet_ledger_poller_visits_in_flight', help: 'BMC visits in flight (each holds at most one session on its BMC)', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.visitsInFlight); } });
  new Gauge({ name: 'fleet_ledger_poller_targets', help: 'Nodes the poller schedules', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.targets); } });
  new Gauge({ name: 'fleet_ledger_poller_latched_targets', help: 'Targets whose logins are latched off after an authentication failure', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.latched); } });
  new Gauge({ name: 'fleet_ledger_poller_pending_outcomes', help: 'Poll outcomes waiting for the ledger (it was unreachable); bounded by the pending budget', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.pendingOutcomes); } });
  new Gauge({ name: 'fleet_ledger_poller_outcomes_dropped', help: 'Poll outcomes dropped because the ledger stayed unreachable past the pending budget', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.outcomesDropped); } });
  new Gauge({ name: 'fleet_ledger_poller_unrecorded_latches', help: 'Lockout latches taken but not yet in the log (the ledger unreachable); retried at every flush', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.unrecordedLatches); } });
  new Gauge({ name: 'fleet_ledger_poller_circuit_open_targets', help: 'Targets polled less often after consecutive failures', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.circuitOpen); } });
  // Per-BMC health in a bounded form: five buckets, two counts and at most five named targets, whatever the fleet's
  // size (one series per BMC would hand a metrics backend 25,000 series per metric).
  new Gauge({
    name: 'fleet_ledger_poller_targets_by_consecutive_failures',
    help: 'Targets by consecutive failed visits (0, 1, 2-3, 4-7, 8+)',
    labelNames: ['failures'] as const,
    registers,
    collect() {
      const s = ctx.poller?.stats();
      if (s) for (const [failures, targets] of Object.entries(s.failureBuckets)) this.set({ failures }, targets);
    },
  });
  new Gauge({ name: 'fleet_ledger_poller_session_limited_targets', help: 'Targets whose last visits met a full session table (each such visit doubles their wait)', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.sessionLimitedTargets); } });
  new Gauge({ name: 'fleet_ledger_poller_fenced_targets', help: 'Targets a credential rotation fences now: no login, heavy reads wait, the liveness check reads the service root only', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.fencedTargets); } });
  new Gauge({ name: 'fleet_ledger_poller_credential_refused_targets', help: 'Targets whose credential is not sent: their address is not one it is bound to, or plain http on a site that does not allow it', registers, collect() { const s = ctx.poller?.stats(); if (s) this.set(s.credentialRefusedTargets); } });
  new Gauge({
    name: 'fleet_ledger_poller_worst_target_consecutive_failures',
    help: 'The few targets failing longest (at most 5 series), by node and site',
    labelNames: ['node', 'site'] as const,
    registers,
    collect() {
      this.reset();
      for (const worst of ctx.poller?.stats().worstTargets ?? []) this.set({ node: worst.nodeId, site: worst.site }, worst.consecutiveFailures);
    },
  });
  const stuckSeen = new Map<string, number>();
  new Counter({
    name: 'fleet_ledger_poller_visits_abandoned_total',
    help: 'Visits still unsettled well past every deadline they were given: each recorded as a timeout, its slot given back (a defect to report)',
    registers,
    collect() {
      const s = ctx.poller?.stats();
      if (s) mirror(this, stuckSeen, 'abandoned', s.visitsAbandoned);
    },
  });
}
