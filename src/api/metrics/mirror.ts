import type { Counter } from 'prom-client';

/**
 * Mirrors a counter that the store, the poller or the cluster keeps itself into a Prometheus counter, at scrape time:
 * adds what it grew since the last scrape (`seen` remembers the last value per key). Called from the counter's own
 * `collect`, which prom-client runs just before that metric is written.
 */
export function mirror(counter: Counter<string>, seen: Map<string, number>, key: string, value: number, labels?: Record<string, string>): void {
  const delta = value - (seen.get(key) ?? 0);
  if (delta > 0) (labels ? counter.inc(labels, delta) : counter.inc(delta));
  seen.set(key, value);
}
