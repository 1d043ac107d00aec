/**
 * What `bench:scale --push` does to the streams and reads back: broken subscriptions injected (half stalled, half
 * accepted-but-silent with a health change the stream never announces) and health changes announced on healthy
 * streams (for event-to-ledger); then which broken ones the ledger recorded as push gaps, and how fast.
 */
import type { EventStore } from '../../src/ledger/index.js';
import { percentile, round } from './bench-database.js';
import { simJson } from './sim-process.js';

export interface PushInjection {
  broken: Map<string, 'stalled' | 'silent'>;
  injectedAt: number;
}

const post = (controlUrl: string, body: unknown): Promise<unknown> => simJson(`${controlUrl}/sim/faults`, { method: 'POST', body });

/** Breaks `count` subscriptions among `candidates`, and announces a health change on `announced` others. */
export async function injectPushFaults(controlUrl: string, candidates: readonly string[], count: number, announced: number): Promise<PushInjection> {
  const broken = new Map<string, 'stalled' | 'silent'>();
  const step = Math.max(1, Math.floor(candidates.length / Math.max(1, count + announced)));
  const picked = candidates.filter((_, i) => i % step === 0).slice(0, count + announced);
  picked.slice(0, count).forEach((id, i) => broken.set(id, i % 2 === 0 ? 'stalled' : 'silent'));
  const stalled = [...broken].filter(([, kind]) => kind === 'stalled').map(([id]) => id);
  const silent = [...broken].filter(([, kind]) => kind === 'silent').map(([id]) => id);
  const injectedAt = Date.now();
  if (stalled.length) await post(controlUrl, { fault: 'push-stall', target: { bmc: stalled } });
  if (silent.length) {
    await post(controlUrl, { fault: 'push-silent', target: { bmc: silent } });
    await post(controlUrl, { fault: 'health', target: { bmc: silent }, health: 'Warning' });
  }
  const others = picked.slice(count);
  if (others.length) await post(controlUrl, { fault: 'health', target: { bmc: others }, health: 'Critical' });
  return { broken, injectedAt };
}

/** How many injected broken subscriptions the ledger recorded as push gaps, and seconds from injection to detection (p99). */
export async function pushFindings(store: EventStore, injection: PushInjection, afterPosition: bigint | number): Promise<{ found: number; foundP99S: number | null }> {
  const rows = await store.pool.query<{ node: string; detected: string }>(
    `SELECT data->>'nodeId' AS node, min(data->>'detectedAt') AS detected FROM ledger_events
      WHERE type = 'PushGapOpened' AND position > $1 AND data->>'detectedAt' >= $2 GROUP BY 1`,
    [String(afterPosition), new Date(injection.injectedAt).toISOString()],
  );
  const latencies = rows.rows.filter((row) => injection.broken.has(row.node)).map((row) => (Date.parse(row.detected) - injection.injectedAt) / 1000).sort((a, b) => a - b);
  return { found: latencies.length, foundP99S: latencies.length ? round(percentile(latencies, 99), 1) : null };
}
