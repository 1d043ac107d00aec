/**
 * One node's history, for auditors: every event about it in log order, its silences as intervals and its alarms.
 *
 * "About the node" is everything the ledger addresses to it: its own streams (`node-<id>`: registration, declaration,
 * observations, intents; `provision-<id>`), events of any stream that name it in `data.nodeId` (rollout dispatches
 * and outcomes, operator verbs, capacity slots), the streams of its firmware steps (`fwstep-<rolloutId>-<id>`, found
 * by their `StepStarted`), acknowledgements of its alarms, and its rows of the poll-outcome batches. Silences are the
 * liveness projection's gaps, replayed with its rule from the log (not read from its table, which holds only now).
 */
import { isEventOf, type RecordedEvent } from '../../events/index.js';
import { defaultLivenessOptions, type LivenessOptions, type LivenessStatus } from '../../projections/index.js';
import type { EventStore } from '../../src/ledger/index.js';
import { nodeAlarms, type AlarmRecord, type AlarmSource } from './alarm-history.js';
import { summarizeEvent } from './event-summary.js';
import { nodeLivenessFacts } from './liveness-facts-reader.js';
import { replayNodeLiveness, type SilenceRecord } from './liveness-replay.js';
import { readNamingNode, readStreams, readTypes } from './log-reads.js';
import { resolveWindow, type LogWindow, type PointInput } from './log-window.js';

/** One event about the node. Instants are RFC 3339, UTC. */
export interface TimelineEntry {
  position: number;
  stream: string;
  type: string;
  /** The event's family in the catalogue (`operator-intent`, `driver-observation`, `poll-outcome`, `saga-progress`, ...). */
  family: string;
  recordedAt: string;
  observedAt: string | null;
  summary: string;
  /** Who asked, when an operator recorded the event (an intent). */
  actor?: { id: string; role: string | null };
  /** The node's poll outcomes in a poll-outcome batch. */
  polls?: Array<{ work: string; outcome: string; at: string; latencyMs: number }>;
}

/** A stretch without contact, from the last contact to the contact that ended it. */
export interface Silence {
  /** `dark` when the node was dark in it (missed its threshold of polls), else `late`. */
  kind: 'dark' | 'late';
  /** The last contact before it. */
  from: string;
  /** The contact that ended it; null: still silent at the end of the window. */
  to: string | null;
  endedBy: 'contact' | 'decommissioned' | null;
  misses: number;
  /** When it reached the dark threshold (in this silence). */
  darkAt: string | null;
  /** When the node counted as healthy again (the recovery threshold, after `to`). */
  recoveredAt: string | null;
  /** From `from` to `to`, or, while it lasts, to the node's last poll in the window. */
  durationMs: number;
  positions: { firstMiss: number; dark: number | null; end: number | null; recovered: number | null };
}

export interface NodeTimeline {
  nodeId: string;
  window: LogWindow;
  /** False when the log has nothing about this node up to the end of the window. */
  known: boolean;
  /** The node's liveness at the end of the window, by the projection's rule. */
  liveness: {
    status: LivenessStatus;
    site: string | null;
    rack: string | null;
    expectedIntervalS: number;
    lastContactAt: string | null;
    consecutiveMisses: number;
    darkSince: string | null;
  };
  entries: TimelineEntry[];
  silences: Silence[];
  alarms: AlarmRecord[];
  alarmSource: AlarmSource;
  counts: { entries: number; intents: number; polls: number; missedPolls: number; silences: number; darkSilences: number; alarms: number };
  /** Entries left out past `maxEntries` (ask again with `from` = `nextFrom`); null when none. */
  truncated: { omitted: number; nextFrom: number } | null;
}

export interface NodeTimelineOptions {
  from?: PointInput;
  to?: PointInput;
  /** The liveness rule's thresholds (default: the projection's). */
  liveness?: Partial<LivenessOptions>;
  /** Most entries returned (default 10,000); silences and alarms cover the whole window regardless. */
  maxEntries?: number;
  now?: Date;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const contacts = new Set(['success', 'not-modified']);

/** `lastPolledAt`: the node's last poll outcome, which a silence that lasts is measured to (on the pollers' clock). */
function silenceOf(record: SilenceRecord, lastPolledAt: number | null): Silence {
  const end = record.resumedAt ?? lastPolledAt ?? record.lastContactAt;
  return {
    kind: record.dark ? 'dark' : 'late',
    from: iso(record.lastContactAt)!,
    to: iso(record.resumedAt),
    endedBy: record.endedBy,
    misses: record.misses,
    darkAt: iso(record.darkAt),
    recoveredAt: iso(record.recoveredAt),
    durationMs: Math.max(0, end - record.lastContactAt),
    positions: { firstMiss: record.firstMissPosition, dark: record.darkPosition, end: record.endPosition, recovered: record.recoveredPosition },
  };
}

function entryOf(store: EventStore, event: RecordedEvent): TimelineEntry {
  const actor = event.actor;
  const entry: TimelineEntry = {
    position: event.position,
    stream: event.stream,
    type: event.type,
    family: store.catalogue.get(event.type)?.family ?? 'unknown',
    recordedAt: event.recordedAt.toISOString(),
    observedAt: event.observedAt ? event.observedAt.toISOString() : null,
    summary: summarizeEvent(event),
  };
  if (actor.kind === 'operator') entry.actor = { id: actor.id, role: actor.role ?? null };
  if (isEventOf(event, 'PollOutcomesRecorded')) {
    const batch = event.data;
    const start = Date.parse(batch.windowStart);
    entry.polls = batch.nodeIds.map((_, i) => ({ work: batch.work[i]!, outcome: batch.outcomes[i]!, at: new Date(start + batch.offsetMs[i]!).toISOString(), latencyMs: batch.latencyMs[i]! }));
    entry.observedAt = entry.polls[0]?.at ?? entry.observedAt;
  }
  return entry;
}

/** One node's history in the window (default: the whole log up to its head). */
export async function nodeTimeline(store: EventStore, nodeId: string, options: NodeTimelineOptions = {}): Promise<NodeTimeline> {
  const window = await resolveWindow(store, { ...(options.from ? { from: options.from } : {}), ...(options.to ? { to: options.to } : {}) }, options.now);
  const livenessOptions: LivenessOptions = { ...defaultLivenessOptions, ...options.liveness };
  const range = { after: window.from.position, through: window.to.position };
  const ownStreams = [`node-${nodeId}`, `provision-${nodeId}`];

  const [own, naming, stepStarts, liveness, alarms] = await Promise.all([
    readStreams(store, ownStreams, range),
    readNamingNode(store, nodeId, range),
    readNamingNode(store, nodeId, { after: 0, through: range.through }, ['StepStarted']),
    nodeLivenessFacts(store, nodeId, range, livenessOptions),
    nodeAlarms(store, nodeId, { ...range, fromAt: window.from.at, toAt: window.to.at }),
  ]);
  const stepStreams = [...new Set(stepStarts.map((event) => event.stream))].filter((stream) => !ownStreams.includes(stream));
  const alarmIds = new Set(alarms.alarms.map((alarm) => alarm.alarmId));
  const [steps, acks] = await Promise.all([
    stepStreams.length > 0 ? readStreams(store, stepStreams, range) : Promise.resolve([]),
    alarmIds.size > 0 ? readTypes(store, ['AlarmAcknowledged'], range) : Promise.resolve([]),
  ]);
  const ackEvents = acks.filter((event) => isEventOf(event, 'AlarmAcknowledged') && alarmIds.has(event.data.alarmId));

  const byPosition = new Map<number, RecordedEvent>();
  for (const event of [...own, ...naming, ...steps, ...ackEvents, ...liveness.windowPolls]) byPosition.set(event.position, event);
  const all = [...byPosition.values()].sort((a, b) => a.position - b.position);
  const maxEntries = options.maxEntries ?? 10_000;
  const kept = all.slice(0, maxEntries);
  const entries = kept.map((event) => entryOf(store, event));

  const replay = replayNodeLiveness(nodeId, liveness.facts, livenessOptions);
  const silences = replay.silences.filter((s) => s.endPosition === null || s.endPosition > range.after).map((s) => silenceOf(s, replay.state.lastOutcomeAt));
  const state = replay.state;
  const known = liveness.facts.length > 0 || all.length > 0 || (await store.streamVersion(`node-${nodeId}`)) !== null;
  const windowOutcomes = liveness.facts.flatMap(({ position, fact }) => (position > range.after && fact.kind === 'outcome' ? [fact.outcome] : []));
  return {
    nodeId,
    window,
    known,
    liveness: {
      status: state.status,
      site: state.site,
      rack: state.rack,
      expectedIntervalS: state.expectedIntervalS,
      lastContactAt: iso(state.lastContactAt),
      consecutiveMisses: state.consecutiveMisses,
      darkSince: iso(state.darkSince),
    },
    entries,
    silences,
    alarms: alarms.alarms,
    alarmSource: alarms.source,
    counts: {
      entries: all.length,
      intents: all.filter((event) => event.actor.kind === 'operator').length,
      polls: liveness.windowPolls.reduce((sum, event) => sum + event.data.outcomes.length, 0),
      missedPolls: windowOutcomes.filter((outcome) => !contacts.has(outcome) && outcome !== 'latched').length,
      silences: silences.length,
      darkSilences: silences.filter((s) => s.kind === 'dark').length,
      alarms: alarms.alarms.length,
    },
    truncated: all.length > kept.length ? { omitted: all.length - kept.length, nextFrom: kept[kept.length - 1]!.position } : null,
  };
}
