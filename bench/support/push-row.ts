/**
 * `bench:scale --push`: the same fleet, the same duration and the same dark BMCs run twice in one invocation, poll
 * only and with push, and one row comparing them (the figures issue 46 names).
 */
import { defaultPushPolicy } from '../../src/poller/index.js';
import { runScale, type ScaleRunOptions, type ScaleRunResult } from './scale-run.js';

/** The simulated models whose real controllers serve an enabled SSE stream (`src/sim/events/event-service-profiles.ts`). */
export const SSE_CAPABLE = new Set(['dell_multi_dpu', 'nvidia_gb200', 'nvidia_gbswitch', 'nvidia_dpu']);

export interface PushRowOptions {
  base: Omit<ScaleRunOptions, 'connectionString' | 'push' | 'eventHeartbeatS'>;
  freshDatabase: () => Promise<string>;
  heartbeatS: number;
  auditIntervalS: number;
  broken: number;
  log?: (line: string) => void;
}

export async function runPushRow(options: PushRowOptions): Promise<Record<string, unknown>> {
  const steadyFromS = Math.min(options.base.durationS / 2, options.base.intervalS * 3);
  const run = async (push: boolean): Promise<ScaleRunResult> =>
    runScale({
      ...options.base,
      steadyFromS,
      eventHeartbeatS: options.heartbeatS,
      connectionString: await options.freshDatabase(),
      ...(push ? { push: { policy: { ...defaultPushPolicy, auditIntervalS: options.auditIntervalS }, injectAtS: steadyFromS, broken: options.broken, announced: options.broken, capable: SSE_CAPABLE } } : {}),
    });
  options.log?.('poll-only run');
  const pollOnly = await run(false);
  options.log?.('push run');
  const pushed = await run(true);
  const p = pushed.push;
  return {
    push: true,
    bmcs: pushed.bmcs,
    mockups: options.base.mockups ?? 'default',
    duration_s: pushed.duration_s,
    interval_s: pushed.interval_s,
    heartbeat_s: options.heartbeatS,
    requests_ratio_poll_to_push: ratio(pollOnly.bmc_requests, pushed.bmc_requests),
    requests_ratio_poll_to_push_steady: ratio(pollOnly.bmc_requests_steady, pushed.bmc_requests_steady),
    bmc_requests_poll_only: pollOnly.bmc_requests,
    bmc_requests_push: pushed.bmc_requests,
    event_to_ledger_p99_s: p?.event_to_ledger_p99_s ?? null,
    events_recorded: p?.events_recorded ?? 0,
    streams_opened: p?.streams_opened ?? 0,
    push_gaps: p?.gaps ?? {},
    broken_subscriptions_injected: p?.broken_subscriptions_injected ?? 0,
    broken_subscriptions_found: p?.broken_subscriptions_found ?? 0,
    broken_found_p99_s: p?.broken_found_p99_s ?? null,
    audit_interval_s: options.auditIntervalS,
    dark_detect_latency_p99_s: pushed.dark_detect_latency_p99_s,
    poll_only_dark_detect_latency_p99_s: pollOnly.dark_detect_latency_p99_s,
    dark_detected: pushed.dark_detected,
    poll_only_dark_detected: pollOnly.dark_detected,
    false_dark_alarms: pushed.false_dark_alarms,
    session_limit_violations: pushed.session_limit_violations,
    poll_only_session_limit_violations: pollOnly.session_limit_violations,
    bmc_resets: pushed.bmc_resets,
  };
}

function ratio(a: number, b: number): number | null {
  return b > 0 ? Math.round((a / b) * 100) / 100 : null;
}

