/**
 * What changed in the fleet between two points of the log, for auditors: nodes that joined, left or moved; firmware
 * that changed; nodes that went dark (and came back, or were still dark at the end); drift opened and closed; alarms
 * opened, closed and acknowledged; firmware steps, rollout milestones and provisioning stages; and every operator
 * intent with who asked.
 *
 * Everything is derived from the events in (from, to] and the least of the past each rule needs, with the
 * projections' own pure rules: the lifecycle events (few) from the start; each changed node's declarations and
 * observations (through its stream); each node's poll outcomes from its last run of contacts before the window (see
 * `liveness-replay.ts`). Nothing is read from the live read models except alarms, whose identities only that model
 * holds. Lists are capped (`maxItems`); counts never are.
 */
import { payloadString, type RecordedEvent } from '../../events/index.js';
import { defaultLivenessOptions, driftEventTypes, driftFactOf, type LivenessOptions } from '../../projections/index.js';
import type { EventStore } from '../../src/ledger/index.js';
import { acknowledgements, alarmChanges, type AlarmAck, type AlarmRecord, type AlarmSource } from './alarm-history.js';
import { driftChanges, type DriftChange } from './drift-changes.js';
import { summarizeEvent } from './event-summary.js';
import { firmwareChanges, type FirmwareChange } from './firmware-changes.js';
import { fleetLivenessFacts } from './liveness-facts-reader.js';
import { replayNodeLiveness } from './liveness-replay.js';
import { firstEvents, readOperatorEvents, readStreams, readTypes } from './log-reads.js';
import { resolveWindow, type LogWindow, type PointInput } from './log-window.js';
import { membershipChanges, type MembershipChange } from './membership-changes.js';
import { provisioningTypes, rolloutMilestoneTypes, sagaMilestones, stepChanges, stepTypes, type SagaMilestone, type StepChange } from './saga-changes.js';

/** A spell in the dark state that overlaps the window. Instants are RFC 3339, UTC. */
export interface DarkSpell {
  nodeId: string;
  site: string | null;
  rack: string | null;
  lastContactAt: string | null;
  /** When the node reached the dark threshold. */
  darkAt: string;
  darkPosition: number;
  /** When it recovered (or was cleared by maintenance or a decommission); null: still dark at the end of the window. */
  endedAt: string | null;
  endPosition: number | null;
  endedBy: 'recovered' | 'maintenance' | 'decommissioned' | null;
  stillDark: boolean;
  /** From the last contact (or from `darkAt`) to the end, or, while it lasts, to the node's last poll in the window. */
  durationMs: number;
}

/** One operator intent: what was asked, and who asked. */
export interface IntentRecord {
  position: number;
  at: string;
  stream: string;
  type: string;
  by: string;
  role: string | null;
  nodeId: string | null;
  summary: string;
}

export interface FleetDiffCounts {
  joined: number;
  left: number;
  moved: number;
  firmwareChanged: number;
  /** Of `firmwareChanged`, the first reads: a component with no version before the window (`from` null), not a change of version. */
  firmwareFirstReads: number;
  wentDark: number;
  recovered: number;
  darkCleared: number;
  /** Of the nodes that went dark in the window, those still dark at its end. */
  stillDark: number;
  driftOpened: number;
  driftClosed: number;
  alarmsOpened: number;
  alarmsClosed: number;
  alarmsAcknowledged: number;
  stepsStarted: number;
  stepsSucceeded: number;
  stepsFailed: number;
  stepsHeld: number;
  stepsQuarantined: number;
  stepOperatorActions: number;
  rolloutMilestones: number;
  provisioning: number;
  intents: number;
}

export interface FleetDiff {
  /** The events compared: positions (from.position, to.position]. */
  window: LogWindow;
  events: number;
  counts: FleetDiffCounts;
  joined: MembershipChange[];
  left: MembershipChange[];
  moved: MembershipChange[];
  firmwareChanged: FirmwareChange[];
  /** Went dark in the window (recovered in it, or still dark at its end). */
  wentDark: DarkSpell[];
  /** Dark before the window, recovered in it. */
  recovered: DarkSpell[];
  /** Dark before the window, cleared in it by a maintenance window or a decommission. */
  darkCleared: DarkSpell[];
  driftOpened: DriftChange[];
  driftClosed: DriftChange[];
  alarmsOpened: AlarmRecord[];
  alarmsClosed: AlarmRecord[];
  alarmsAcknowledged: Array<AlarmAck & { kind: string | null; summary: string | null; nodeId: string | null }>;
  alarmSource: AlarmSource;
  rolloutSteps: StepChange[];
  rolloutMilestones: SagaMilestone[];
  provisioning: SagaMilestone[];
  intents: IntentRecord[];
  /** The lists cut at `maxItems` (their counts are whole). */
  truncated: string[];
}

export interface FleetDiffOptions {
  from: PointInput;
  /** Default: the head of the log. */
  to?: PointInput;
  liveness?: Partial<LivenessOptions>;
  /** Most items per list (default 10,000). */
  maxItems?: number;
  now?: Date;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function intentOf(event: RecordedEvent): IntentRecord {
  const actor = event.actor as { id: string; role?: string };
  const nodeId = payloadString(event, 'nodeId');
  return {
    position: event.position,
    at: event.recordedAt.toISOString(),
    stream: event.stream,
    type: event.type,
    by: actor.id,
    role: actor.role ?? null,
    nodeId: nodeId ?? null,
    summary: summarizeEvent(event),
  };
}

function groupByNode(events: readonly RecordedEvent[]): Map<string, RecordedEvent[]> {
  const byNode = new Map<string, RecordedEvent[]>();
  for (const event of events) {
    const nodeId = driftFactOf(event)?.nodeId;
    if (!nodeId) continue;
    let list = byNode.get(nodeId);
    if (!list) byNode.set(nodeId, (list = []));
    list.push(event);
  }
  return byNode;
}

/** What changed between `from` and `to`. */
export async function fleetDiff(store: EventStore, options: FleetDiffOptions): Promise<FleetDiff> {
  const window = await resolveWindow(store, { from: options.from, ...(options.to ? { to: options.to } : {}) }, options.now);
  const range = { after: window.from.position, through: window.to.position };
  const livenessOptions: LivenessOptions = { ...defaultLivenessOptions, ...options.liveness };

  // Four independent reads, each as soon as it can start.
  const [liveness, history, sagas, { operatorEvents, alarms }] = await Promise.all([
    fleetLivenessFacts(store, range, livenessOptions),
    (async () => {
      const changedNodes = [...groupByNode(await readTypes(store, driftEventTypes, range)).keys()];
      return changedNodes.length > 0 ? groupByNode(await readStreams(store, changedNodes.map((nodeId) => `node-${nodeId}`), { after: 0, through: range.through }, driftEventTypes)) : new Map<string, RecordedEvent[]>();
    })(),
    (async () => {
      const events = await readTypes(store, [...stepTypes, ...rolloutMilestoneTypes, ...provisioningTypes], range);
      // Step events after StepStarted name neither rollout nor node: their stream's first event does.
      const continued = events.filter((event) => event.type !== 'StepStarted' && stepTypes.includes(event.type as (typeof stepTypes)[number])).map((event) => event.stream);
      return { events, firstOfStream: await firstEvents(store, continued) };
    })(),
    (async () => {
      const operatorEvents = await readOperatorEvents(store, range);
      return { operatorEvents, alarms: await alarmChanges(store, { ...range, fromAt: window.from.at, toAt: window.to.at }, acknowledgements(operatorEvents)) };
    })(),
  ]);

  const membership = membershipChanges(liveness.lifecycleEvents.filter((event) => event.type !== 'MaintenanceWindowSet'), range);
  const firmwareHistory = new Map([...history].map(([nodeId, events]) => [nodeId, events.filter((event) => event.type === 'FirmwareInventoryObserved')]));
  const firmware = firmwareChanges(firmwareHistory, range);
  const driftSeen = driftChanges(history, range);

  const wentDark: DarkSpell[] = [];
  const recovered: DarkSpell[] = [];
  const darkCleared: DarkSpell[] = [];
  let stillDark = 0;
  for (const [nodeId, facts] of liveness.facts) {
    const replay = replayNodeLiveness(nodeId, facts, livenessOptions);
    for (const spell of replay.darkSpells) {
      const endedInWindow = spell.endPosition !== null && spell.endPosition > range.after;
      const startedInWindow = spell.darkPosition > range.after;
      if (!startedInWindow && !endedInWindow) continue;
      const began = spell.lastContactAt ?? spell.darkAt;
      const view: DarkSpell = {
        nodeId,
        site: replay.state.site,
        rack: replay.state.rack,
        lastContactAt: iso(spell.lastContactAt),
        darkAt: iso(spell.darkAt)!,
        darkPosition: spell.darkPosition,
        endedAt: iso(spell.endedAt),
        endPosition: spell.endPosition,
        endedBy: spell.endedBy,
        stillDark: spell.endPosition === null,
        durationMs: Math.max(0, (spell.endedAt ?? replay.state.lastOutcomeAt ?? spell.darkAt) - began),
      };
      if (startedInWindow) {
        wentDark.push(view);
        if (view.stillDark) stillDark += 1;
      }
      else if (spell.endedBy === 'recovered') recovered.push(view);
      else if (spell.endedBy !== null) darkCleared.push(view);
    }
  }
  const byDark = (a: DarkSpell, b: DarkSpell): number => a.darkPosition - b.darkPosition || a.nodeId.localeCompare(b.nodeId);
  const byEnd = (a: DarkSpell, b: DarkSpell): number => (a.endPosition ?? 0) - (b.endPosition ?? 0) || a.nodeId.localeCompare(b.nodeId);

  const steps = stepChanges(sagas.events, sagas.firstOfStream);
  const stepCount = (change: StepChange['change']): number => steps.filter((step) => step.change === change).length;
  const rolloutMilestones = sagaMilestones(sagas.events, rolloutMilestoneTypes);
  const provisioning = sagaMilestones(sagas.events, provisioningTypes);
  const intents = operatorEvents.map(intentOf);

  const maxItems = options.maxItems ?? 10_000;
  const truncated: string[] = [];
  const cap = <T>(name: string, items: T[]): T[] => {
    if (items.length <= maxItems) return items;
    truncated.push(name);
    return items.slice(0, maxItems);
  };
  return {
    window,
    events: range.through - range.after,
    counts: {
      joined: membership.joined.length,
      left: membership.left.length,
      moved: membership.moved.length,
      firmwareChanged: firmware.length,
      firmwareFirstReads: firmware.filter((change) => change.from === null).length,
      wentDark: wentDark.length,
      recovered: recovered.length,
      darkCleared: darkCleared.length,
      stillDark,
      driftOpened: driftSeen.opened.length,
      driftClosed: driftSeen.closed.length,
      alarmsOpened: alarms.opened.length,
      alarmsClosed: alarms.closed.length,
      alarmsAcknowledged: alarms.acknowledged.length,
      stepsStarted: stepCount('started'),
      stepsSucceeded: stepCount('succeeded'),
      stepsFailed: stepCount('failed'),
      stepsHeld: stepCount('held'),
      stepsQuarantined: stepCount('quarantined'),
      stepOperatorActions: stepCount('operator-action'),
      rolloutMilestones: rolloutMilestones.length,
      provisioning: provisioning.length,
      intents: intents.length,
    },
    joined: cap('joined', membership.joined),
    left: cap('left', membership.left),
    moved: cap('moved', membership.moved),
    firmwareChanged: cap('firmwareChanged', firmware),
    wentDark: cap('wentDark', wentDark.sort(byDark)),
    recovered: cap('recovered', recovered.sort(byEnd)),
    darkCleared: cap('darkCleared', darkCleared.sort(byEnd)),
    driftOpened: cap('driftOpened', driftSeen.opened),
    driftClosed: cap('driftClosed', driftSeen.closed),
    alarmsOpened: cap('alarmsOpened', alarms.opened),
    alarmsClosed: cap('alarmsClosed', alarms.closed),
    alarmsAcknowledged: cap('alarmsAcknowledged', alarms.acknowledged),
    alarmSource: alarms.source,
    rolloutSteps: cap('rolloutSteps', steps),
    rolloutMilestones: cap('rolloutMilestones', rolloutMilestones),
    provisioning: cap('provisioning', provisioning),
    intents: cap('intents', intents),
    truncated,
  };
}
