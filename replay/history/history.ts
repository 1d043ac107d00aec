/**
 * An auditor's history of the fleet: one node's timeline, and what changed between two points of the log.
 *
 * The timeline reads the node's own streams (`node-<id>`, its provisioning and rollout steps) and shows its silences
 * as intervals from the liveness read model as of the end of the window (the same rules that decide dark live).
 * The diff compares the read models as of both ends (through the as-of engine), so "went dark", "firmware changed" or
 * "drift opened" mean exactly what the live read models say, and lists every intent and rollout step in between
 * with who asked.
 */
import { sql, type Kysely } from 'kysely';
import type { EventStore } from '../../src/ledger/index.js';
import type { AsOfEngine, AsOfPoint } from '../as-of/index.js';

export interface TimelineEntry {
  position: number;
  recordedAt: string;
  observedAt: string | null;
  stream: string;
  type: string;
  summary: string;
  actor?: { kind: string; id: string };
}

export interface Silence {
  from: string;
  to: string | null;
  wentDark: boolean;
  misses: number;
  endedBy: string | null;
}

export interface Timeline {
  nodeId: string;
  through: AsOfPoint;
  entries: TimelineEntry[];
  silences: Silence[];
}

const iso = (value: unknown): string | null => (value === null || value === undefined ? null : new Date(value as string).toISOString());

/** One line an operator reads: the event's type and the fields that matter. */
export function summarize(type: string, data: Record<string, unknown>): string {
  const pick = (...keys: string[]): string =>
    keys
      .filter((key) => data[key] !== undefined && data[key] !== null && typeof data[key] !== 'object')
      .map((key) => `${key}=${String(data[key])}`)
      .join(' ');
  const firmware = Array.isArray(data['components'])
    ? (data['components'] as Array<Record<string, unknown>>)
        .slice(0, 4)
        .map((c) => `${String(c['component'] ?? c['name'] ?? '?')} ${String(c['version'] ?? '')}`)
        .join(', ')
    : '';
  const detail = [pick('reason', 'site', 'rack', 'state', 'outcome', 'version', 'targetVersion', 'cause', 'hold', 'verdict', 'attempt', 'manufacturer', 'model', 'serialNumber'), firmware].filter(Boolean).join('; ');
  return detail ? `${type}: ${detail}`.slice(0, 300) : type;
}

export async function nodeTimeline(store: EventStore, asOf: AsOfEngine, nodeId: string, window: { from?: AsOfPoint; to?: AsOfPoint } = {}): Promise<Timeline> {
  const db = store.db as unknown as Kysely<any>;
  const head = await store.head();
  const to = window.to ?? { position: head.position, recordedAt: head.recordedAt };
  const from = window.from?.position ?? 0;
  const rows = await sql<{ position: string; recorded_at: Date; observed_at: Date | null; stream: string; type: string; data: Record<string, unknown>; actor: { kind: string; id: string } }>`
    SELECT position, recorded_at, observed_at, stream, type, data, actor FROM ledger_events
     WHERE (stream = ${`node-${nodeId}`} OR stream = ${`provision-${nodeId}`} OR (stream LIKE 'fwstep-%' AND stream LIKE ${`%-${nodeId}`}))
       AND position > ${from} AND position <= ${to.position}
     ORDER BY position LIMIT 20000`.execute(db);
  const entries = rows.rows.map((row) => ({
    position: Number(row.position),
    recordedAt: iso(row.recorded_at)!,
    observedAt: iso(row.observed_at),
    stream: row.stream,
    type: row.type,
    summary: summarize(row.type, row.data),
    ...(row.actor.kind === 'operator' ? { actor: { kind: row.actor.kind, id: row.actor.id } } : {}),
  }));
  const view = to.position === head.position ? db : (await asOf.view(to)).db;
  const fromInstant = window.from?.recordedAt ?? new Date(0);
  const gaps = await view
    .selectFrom('liveness_gaps')
    .selectAll()
    .where('node_id', '=', nodeId)
    .where((eb: any) => eb.or([eb('end_at', 'is', null), eb('end_at', '>=', fromInstant)]))
    .orderBy('start_at')
    .execute();
  const silences = gaps.map((gap: any) => ({ from: iso(gap.start_at)!, to: iso(gap.end_at), wentDark: Boolean(gap.went_dark), misses: Number(gap.misses), endedBy: gap.ended_by ?? null }));
  return { nodeId, through: to, entries, silences };
}

export interface FleetDiff {
  from: AsOfPoint;
  to: AsOfPoint;
  joined: string[];
  left: string[];
  firmwareChanged: Array<{ nodeId: string; component: string; from: string | null; to: string }>;
  wentDark: Array<{ nodeId: string; since: string; recoveredAt: string | null }>;
  /** Dark before the window, back within it. */
  recovered: Array<{ nodeId: string; since: string; recoveredAt: string }>;
  driftOpened: Array<{ nodeId: string; field: string; declared: string | null; observed: string | null }>;
  driftClosed: Array<{ nodeId: string; field: string }>;
  alarmsOpened: Array<{ alarmId: string; kind: string; summary: string; status: string }>;
  alarmsClosed: Array<{ alarmId: string; kind: string; summary: string }>;
  rolloutSteps: Array<{ position: number; stream: string; type: string; summary: string }>;
  intents: Array<{ position: number; recordedAt: string; type: string; by: string; role: string | null; summary: string }>;
  counts: Record<string, number>;
}

/** A view of the read models as of a point: the live tables when the point is the head. */
async function readModels(store: EventStore, asOf: AsOfEngine, point: AsOfPoint): Promise<Kysely<any>> {
  if (point.position === 0) return (await asOf.view({ position: 0, recordedAt: new Date(0) })).db;
  return (await asOf.view(point)).db;
}

const stepTypes = ['StepStarted', 'StepSucceeded', 'StepFailed', 'StepHeld', 'StepQuarantined', 'StepOperatorAction', 'RolloutPlanned', 'RolloutApproved', 'RolloutHalted', 'RolloutPaused', 'RolloutResumed', 'RolloutAborted', 'RolloutCompleted'];

export async function fleetDiff(store: EventStore, asOf: AsOfEngine, from: AsOfPoint, to: AsOfPoint): Promise<FleetDiff> {
  const db = store.db as unknown as Kysely<any>;
  const [before, after] = await Promise.all([readModels(store, asOf, from), readModels(store, asOf, to)]);
  const nodes = async (view: Kysely<any>) => new Map((await view.selectFrom('liveness_nodes').select(['node_id', 'state']).execute()).map((r: any) => [r.node_id as string, r.state as string]));
  const [nodesBefore, nodesAfter] = await Promise.all([nodes(before), nodes(after)]);
  const present = (map: Map<string, string>, id: string): boolean => map.has(id) && map.get(id) !== 'decommissioned';
  const joined = [...nodesAfter.keys()].filter((id) => present(nodesAfter, id) && !present(nodesBefore, id)).sort();
  const left = [...nodesBefore.keys()].filter((id) => present(nodesBefore, id) && !present(nodesAfter, id)).sort();

  const firmware = async (view: Kysely<any>) => new Map((await view.selectFrom('inventory_firmware').select(['node_id', 'component', 'version']).execute()).map((r: any) => [`${r.node_id}\u0000${r.component}`, r.version as string]));
  const [fwBefore, fwAfter] = await Promise.all([firmware(before), firmware(after)]);
  const firmwareChanged = [...fwAfter.entries()]
    .filter(([key, version]) => fwBefore.get(key) !== version)
    .map(([key, version]) => {
      const [nodeId, component] = key.split('\u0000') as [string, string];
      return { nodeId, component, from: fwBefore.get(key) ?? null, to: version };
    })
    .sort((a, b) => a.nodeId.localeCompare(b.nodeId) || a.component.localeCompare(b.component));

  // Silences by identity: a dark gap the later view has and the earlier had not (or had not yet called dark), and a
  // gap dark at the start that the later view closes. Times are the poller's observations, not the ledger clock.
  const darkGaps = async (view: Kysely<any>) => new Map((await view.selectFrom('liveness_gaps').selectAll().where('went_dark', '=', true).execute()).map((g: any) => [g.gap_id as string, g]));
  const [gapsBefore, gapsAfter] = await Promise.all([darkGaps(before), darkGaps(after)]);
  const wentDark = [...gapsAfter.values()]
    .filter((gap: any) => !gapsBefore.has(gap.gap_id))
    .map((gap: any) => ({ nodeId: gap.node_id as string, since: iso(gap.start_at)!, recoveredAt: iso(gap.end_at) }))
    .sort((a, b) => a.since.localeCompare(b.since));
  const recovered = [...gapsBefore.values()]
    .filter((gap: any) => gap.end_at === null && gapsAfter.get(gap.gap_id)?.end_at)
    .map((gap: any) => ({ nodeId: gap.node_id as string, since: iso(gap.start_at)!, recoveredAt: iso(gapsAfter.get(gap.gap_id).end_at)! }));

  const drift = async (view: Kysely<any>) => new Map((await view.selectFrom('drift_fields').selectAll().where('kind', '!=', 'match').execute()).map((r: any) => [`${r.node_id}\u0000${r.field}`, r]));
  const [driftBefore, driftAfter] = await Promise.all([drift(before), drift(after)]);
  const driftOpened = [...driftAfter.entries()].filter(([key]) => !driftBefore.has(key)).map(([, r]: [string, any]) => ({ nodeId: r.node_id, field: r.field, declared: r.declared, observed: r.observed }));
  const driftClosed = [...driftBefore.entries()].filter(([key]) => !driftAfter.has(key)).map(([, r]: [string, any]) => ({ nodeId: r.node_id, field: r.field }));

  const alarms = async (view: Kysely<any>) => new Map((await view.selectFrom('alarms').select(['alarm_id', 'kind', 'summary', 'status']).execute()).map((r: any) => [r.alarm_id as string, r]));
  const [alarmsBefore, alarmsAfter] = await Promise.all([alarms(before), alarms(after)]);
  const isOpen = (r: any): boolean => r && r.status !== 'closed';
  const alarmsOpened = [...alarmsAfter.values()].filter((r: any) => !alarmsBefore.has(r.alarm_id)).map((r: any) => ({ alarmId: r.alarm_id, kind: r.kind, summary: r.summary, status: r.status }));
  const alarmsClosed = [...alarmsBefore.values()].filter((r: any) => isOpen(r) && !isOpen(alarmsAfter.get(r.alarm_id))).map((r: any) => ({ alarmId: r.alarm_id, kind: r.kind, summary: r.summary }));

  const steps = await sql<{ position: string; stream: string; type: string; data: Record<string, unknown> }>`
    SELECT position, stream, type, data FROM ledger_events
     WHERE position > ${from.position} AND position <= ${to.position} AND type IN (${sql.join(stepTypes)})
     ORDER BY position LIMIT 5000`.execute(db);
  const rolloutSteps = steps.rows.map((row) => ({ position: Number(row.position), stream: row.stream, type: row.type, summary: summarize(row.type, row.data) }));
  const intentRows = await sql<{ position: string; recorded_at: Date; type: string; actor: { kind: string; id: string; role?: string }; data: Record<string, unknown> }>`
    SELECT position, recorded_at, type, actor, data FROM ledger_events
     WHERE position > ${from.position} AND position <= ${to.position} AND actor->>'kind' = 'operator'
     ORDER BY position LIMIT 5000`.execute(db);
  const intents = intentRows.rows.map((row) => ({ position: Number(row.position), recordedAt: iso(row.recorded_at)!, type: row.type, by: row.actor.id, role: row.actor.role ?? row.actor.kind ?? null, summary: summarize(row.type, row.data) }));
  const diff = { from, to, joined, left, firmwareChanged, wentDark, recovered, driftOpened, driftClosed, alarmsOpened, alarmsClosed, rolloutSteps, intents };
  const counts = Object.fromEntries(Object.entries(diff).filter(([, v]) => Array.isArray(v)).map(([k, v]) => [k, (v as unknown[]).length]));
  return { ...diff, counts };
}
