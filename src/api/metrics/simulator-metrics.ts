import { Gauge } from 'prom-client';
import type { MetricsContext, Registers } from './metrics-context.js';

/** The simulated BMCs' sessions, when the simulator runs in this process. */
export function registerSimulatorMetrics(ctx: MetricsContext, registers: Registers): void {
  if (ctx.simulator) {
    const simulator = ctx.simulator;
    new Gauge({ name: 'fleet_ledger_sim_bmc_sessions_open', help: 'Sessions open on the simulated BMCs, all BMCs together', registers, collect() { this.set(simulator.stats().sessionsNow); } });
    new Gauge({ name: 'fleet_ledger_sim_bmc_sessions_peak_max', help: 'The most sessions any one simulated BMC has served at once', registers, collect() { this.set(simulator.stats().sessionsPeakMax); } });
  }
}
