/**
 * Observation change detection: a content hash per (node, observation type) over the canonical observation, so
 * the poller appends an observation only when what the device says changed.
 *
 * Canonical means: object keys sorted, `undefined` members dropped, and the fields that describe the read rather
 * than the device excluded (`latencyMs`, `observedAt`, `recordedAt`). Array order is kept: drivers emit
 * members in the device's order, and a reordering is reported as a change rather than guessed away.
 * Pure: no clock, no I/O (the hash is SHA-256 from `node:crypto`, deterministic across processes).
 */
import { createHash } from 'node:crypto';
import type { DriverObservation, SelEntriesObservedData, SelEntry } from '../../events/index.js';

/** Fields that vary between two reads of an unchanged device. */
export const volatileObservationFields: readonly string[] = ['latencyMs', 'observedAt', 'recordedAt'];

function canonical(value: unknown, depth: number): unknown {
  if (Array.isArray(value)) return value.map((item) => canonical(item, depth + 1));
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([key, item]) => item !== undefined && !(depth === 0 && volatileObservationFields.includes(key)))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, item]) => [key, canonical(item, depth + 1)] as const);
    return Object.fromEntries(entries);
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return value;
}

/**
 * How coarse a sensor reading is before it counts as a change, per unit. Readings move on every read of a
 * healthy node; only a move across a band (or a change of health) is news worth an event, so a stable
 * node costs nothing but its poll outcomes. The band edges are what an operator would call "different".
 */
const sensorBands: Record<string, number> = { Cel: 5, C: 5, RPM: 1000, '%': 10, W: 100, Watts: 100, V: 1, A: 2 };

function banded(reading: { reading: number | null; unit: string }): number | null {
  if (reading.reading === null) return null;
  const band = sensorBands[reading.unit] ?? 10;
  return Math.round(reading.reading / band);
}

/** The part of a sensors observation that change detection looks at: readings by band, health exactly. */
function sensorsForHash(data: Record<string, unknown>): Record<string, unknown> {
  const bandAll = (list: unknown) =>
    Array.isArray(list) ? list.map((item: { name: string; reading: number | null; unit: string; health?: string }) => ({ ...item, reading: banded(item) })) : list;
  return {
    ...data,
    temperatures: bandAll(data.temperatures),
    fans: bandAll(data.fans),
    other: bandAll(data.other),
    powerSupplies: Array.isArray(data.powerSupplies)
      ? data.powerSupplies.map((psu: { outputWatts?: number | null }) => ({ ...psu, outputWatts: psu.outputWatts == null ? psu.outputWatts : Math.round(psu.outputWatts / 100) }))
      : data.powerSupplies,
    powerConsumedWatts: typeof data.powerConsumedWatts === 'number' ? Math.round(data.powerConsumedWatts / 100) : data.powerConsumedWatts,
  };
}

/**
 * A network device's uptime advances on every read of an unchanged device (a PDU walked every five minutes would
 * append an event each time): it is not looked at, like a read's latency. The rest is what the device says.
 */
function networkDeviceForHash(data: Record<string, unknown>): Record<string, unknown> {
  const { uptimeSeconds: _uptime, ...rest } = data;
  return rest;
}

/** The canonical JSON text of an observation payload (what the hash is computed over). */
export function canonicalObservationJson(data: unknown): string {
  return JSON.stringify(canonical(data, 0)) ?? 'null';
}

/** Hex SHA-256 of the node id, observation type and canonical payload. */
export function observationContentHash(nodeId: string, observation: DriverObservation): string {
  return createHash('sha256')
    .update(nodeId)
    .update('\u0000')
    .update(observation.type)
    .update('\u0000')
    .update(
      canonicalObservationJson(
        observation.type === 'SensorsObserved'
          ? sensorsForHash(observation.data)
          : observation.type === 'NetworkDeviceObserved'
            ? networkDeviceForHash(observation.data)
            : observation.data,
      ),
    )
    .digest('hex');
}

/** Per SEL log, the keys of the entries it held at the last read: `log\tkey key ...` lines. */
function parseSelKeys(text: string | undefined): Map<string, Set<string>> {
  const byLog = new Map<string, Set<string>>();
  for (const line of (text ?? '').split('\n')) {
    const [log, keys = ''] = line.split('\t');
    if (log) byLog.set(log, new Set(keys.split(' ').filter(Boolean)));
  }
  return byLog;
}

/**
 * The entries of a SEL reading that the previous one did not hold, and what to keep for the next: per log, the keys
 * it holds now (bounded by the driver's per-log cap), not every key ever seen, since an entry that left the log
 * (wrapped, cleared) does not come back with the same `Created`. A log whose entries could not be read this time
 * (or, when something was unreadable, a log not listed at all) keeps its previous keys, so its entries are not news
 * when it answers again.
 */
function newSelEntries(data: SelEntriesObservedData, previousText: string | undefined): { fresh: SelEntry[]; kept: string } {
  const previous = parseSelKeys(previousText);
  const unreadable = data.unreadable ?? [];
  const next = new Map<string, Set<string>>();
  for (const log of data.logs) {
    const current = data.entries.filter((entry) => entry.log === log).map((entry) => entry.key);
    const failed = unreadable.some((entry) => entry.path === log || entry.path.startsWith(`${log}/`));
    next.set(log, new Set([...(failed ? (previous.get(log) ?? []) : []), ...current]));
  }
  if (unreadable.length > 0) for (const [log, keys] of previous) if (!next.has(log)) next.set(log, keys);
  const fresh = data.entries.filter((entry) => !previous.get(entry.log)?.has(entry.key));
  return { fresh, kept: [...next].map(([log, keys]) => `${log}\t${[...keys].join(' ')}`).join('\n') };
}

/**
 * Which of `observations` differ from the last hashes seen for the node; returns those to append and the new
 * hash map. `previous` is keyed by observation type and is not modified. A `SelEntriesObserved` is appended with
 * only the entries the previous read did not hold (none new: not appended); its map value is, per log, the keys
 * of the entries the log held.
 */
export function changedObservations(
  nodeId: string,
  observations: readonly DriverObservation[],
  previous: ReadonlyMap<string, string>,
): { changed: DriverObservation[]; hashes: Map<string, string> } {
  const hashes = new Map(previous);
  const changed: DriverObservation[] = [];
  for (const observation of observations) {
    if (observation.type === 'SelEntriesObserved') {
      // An event log is not a state that changes but a list that grows: what is news is each entry not seen in
      // the previous read, so only those are appended, and an entry read twice is one observation.
      const { fresh, kept } = newSelEntries(observation.data, previous.get(observation.type));
      hashes.set(observation.type, kept);
      if (fresh.length > 0) changed.push({ type: observation.type, data: { ...observation.data, entries: fresh } });
      continue;
    }
    const hash = observationContentHash(nodeId, observation);
    if (previous.get(observation.type) !== hash) changed.push(observation);
    hashes.set(observation.type, hash);
  }
  return { changed, hashes };
}
