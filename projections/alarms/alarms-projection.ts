/**
 * The alarms projection: one `alarms` table for every alarm the fleet raises, open or closed, with who
 * acknowledged it. It re-derives what it needs from the log with the same pure functions as the other
 * projections (a projection never reads another's tables: each can be rebuilt alone):
 * - node dark: `advanceLiveness` (sustained misses, hysteresis on recovery);
 * - root cause: `correlateDark` / `onNodeBack` over the declared topology, folding node alarms under it;
 * - drift: `evolveDrift` (an alarm while a node has a mismatch, an unexpected part or a missing one);
 * - GPU: XID errors of warning or critical severity (the drivers' catalogue severity), uncorrected ECC errors.
 * Alarm ids are derived from the node and the position of the event that raised it, so a rebuild gives the
 * same ids as the live run.
 */
import type { Kysely, Transaction } from 'kysely';
import { assertNever, eventGuard, type GpuTelemetryObservedData, type GpuXidObservedData, type RecordedEvent } from '../../events/index.js';
import {
  componentsOfRack,
  defaultBlastRadiusOptions,
  correlateDark,
  onNodeBack,
  type BlastRadiusOptions,
  type ComponentWatch,
  type DarkNode,
  type RackTopology,
} from '../blast-radius/blast-radius-evolve.js';
import { driftOf, evolveDrift, initialDrift, type FirmwareComparator, type NodeDrift } from '../drift/drift-evolve.js';
import { driftFactOf } from '../drift/drift-facts.js';
import { dialectFirmwareComparator } from '../drift/firmware-comparator.js';
import { advanceLiveness, defaultLivenessOptions, initialLiveness, type LivenessOptions, type LivenessSink, type LivenessTransition, type NodeLiveness } from '../liveness/liveness-evolve.js';
import { forEachLivenessFact } from '../liveness/liveness-facts.js';
import type { Projection } from '../projection.js';
import { createTable, loadRows, nodeIdOfStream, upsertRows, type Row, holdTablesForRebuild, type HeldTables } from '../support/table.js';
import { AlarmBook } from './alarm-book.js';
import { createHistoryView } from '../support/version-views.js';
import { createVersionsTable, versionsTableName } from '../support/versions.js';
import { alarmsHistoryView, alarmsTable, alarmStateTable } from './alarms-table.js';
import type { DynamicDatabase } from '../../src/ledger/index.js';
import { iso, kindLabel, openAlarmRow } from './alarm-row.js';
import { applyCertificateAlarm } from './certificate-alarms.js';
import { alarmsEventTypes } from './alarms-event-types.js';

export interface AlarmsOptions {
  liveness?: Partial<LivenessOptions>;
  blastRadius?: Partial<BlastRadiusOptions>;
  compareFirmware?: FirmwareComparator;
}

/** Per node, kept under `node:<id>`: what liveness and GPU alarms need. */
interface AlarmNodeState {
  liveness: NodeLiveness;
  darkAlarmId: string | null;
  gpuAlarms: Record<string, { alarmId: string; occurrences: number }>;
  /** The changed-certificate alarm open for the node (`certificate-alarms.ts`); absent in states written before it. */
  certificateAlarmId?: string | null;
}

/** Per node, kept apart under `drift:<id>` (it is larger, and most batches do not touch it). */
interface AlarmDriftState {
  drift: NodeDrift;
  driftAlarmId: string | null;
}

interface RackState extends RackTopology {
  components: string[];
  nodeCount: number;
}

interface Topology {
  racks: Map<string, RackState>;
  watches: Map<string, ComponentWatch>;
  dirty: Set<string>;
  fed: Map<string, number> | null;
}

const isAlarmsEvent = eventGuard(alarmsEventTypes);

/** A site's replication backlog alarm: one per site and slot. */
const backlogAlarmId = (site: string, slot: string): string => `replication-backlog:${site}:${slot}`;
/** A backlog alarm closes when a heartbeat shows the slot holding less than this share of its bound. */
const backlogClearShare = 0.25;
/** The share of its bound a slot holds (as the site's heartbeat computes it): 1 when lost, 0 when unbounded. */
function backlogShare(slot: { walStatus: string | null; retainedBytes: number; limitBytes: number | null }): number {
  if (slot.walStatus === 'lost') return 1;
  return slot.limitBytes ? slot.retainedBytes / slot.limitBytes : 0;
}

export class AlarmsProjection implements Projection {
  readonly name = 'alarms';
  // 2: a saga step held by name (past its deadline, outcome unknown) is an alarm until an operator acts on it.
  // 3: an event a projection set aside (could not apply) is an alarm: the read model it feeds is missing one fact.
  // 4: a BMC certificate other than the pinned one is an alarm until an operator accepts it.
  // 5: alarm history (versions).
  readonly version = 5;
  readonly eventTypes = alarmsEventTypes;
  readonly tables = [alarmsTable.name, alarmStateTable.name, versionsTableName(alarmsTable)];
  readonly workingTables = [alarmStateTable.name];

  /** Its tables are reached only through `loadRows`, `upsertRows` and `deleteRows`: a rebuild holds them in memory. */
  holdTables(): HeldTables {
    return holdTablesForRebuild(this.tables);
  }
  readonly #liveness: LivenessOptions;
  readonly #blast: BlastRadiusOptions;
  readonly #compare: FirmwareComparator;

  constructor(options: AlarmsOptions = {}) {
    this.#liveness = { ...defaultLivenessOptions, ...options.liveness };
    this.#blast = { ...defaultBlastRadiusOptions, ...options.blastRadius };
    this.#compare = options.compareFirmware ?? dialectFirmwareComparator;
  }

  async createTables(db: Kysely<DynamicDatabase>): Promise<void> {
    await createTable(db, alarmsTable);
    await createTable(db, alarmStateTable);
    await createVersionsTable(db, alarmsTable);
    await createHistoryView(db, alarmsTable, alarmsHistoryView);
  }

  async apply(trx: Transaction<DynamicDatabase>, events: readonly RecordedEvent[]): Promise<void> {
    // Pass 1: every node the batch touches, so that states load in one query each.
    const touched = new Set<string>();
    // Backlog alarms a heartbeat of the batch may clear: which of them are open is read once.
    const backlogCandidates = new Set<string>();
    const driftTouched = new Set<string>();
    let needsTopology = false;
    for (const event of events) {
      if (!isAlarmsEvent(event)) continue;
      switch (event.type) {
        case 'PollOutcomesRecorded':
          for (const nodeId of event.data.nodeIds) touched.add(nodeId);
          needsTopology = true;
          break;
        case 'NodeRegistered':
        case 'MaintenanceWindowSet':
        case 'NodeDecommissioned':
          touched.add(event.data.nodeId);
          needsTopology = true;
          break;
        case 'TopologyDeclared':
          needsTopology = true;
          break;
        case 'GpuXidObserved':
        case 'GpuTelemetryObserved': {
          const nodeId = nodeIdOfStream(event.stream);
          if (nodeId) touched.add(nodeId);
          break;
        }
        case 'StepHeld': {
          const nodeId = event.data.nodeId;
          if (nodeId) touched.add(nodeId);
          break;
        }
        case 'BmcCertificateChanged':
        case 'BmcCertificateAccepted':
          touched.add(event.data.nodeId);
          break;
        case 'NodeDeclared':
        case 'NodeInventoryObserved':
        case 'FirmwareInventoryObserved': {
          const drift = driftFactOf(event);
          if (drift) driftTouched.add(drift.nodeId);
          break;
        }
        case 'AlarmAcknowledged':
        case 'StepOperatorAction':
        case 'ProjectionEventSetAside':
        case 'LedgerIntegrityAlarmRaised':
        case 'SiteReplicationBacklogWarned':
          // They change alarms by id or stream, not a node's state.
          break;
        case 'SiteHeartbeat':
          for (const slot of event.data.slots) if (backlogShare(slot) < backlogClearShare) backlogCandidates.add(backlogAlarmId(event.data.site, slot.slot));
          break;
        default:
          assertNever(event);
      }
    }
    const nodes = new Map<string, AlarmNodeState>();
    const drifts = new Map<string, AlarmDriftState>();
    const keys = [...[...touched].map((id) => `node:${id}`), ...[...driftTouched].map((id) => `drift:${id}`)];
    for (const row of await loadRows(trx, alarmStateTable, 'key', keys)) {
      if (row.scope === 'node') {
        const state = row.state as AlarmNodeState;
        nodes.set(state.liveness.nodeId, state);
      } else {
        const state = row.state as AlarmDriftState;
        drifts.set(state.drift.nodeId, state);
      }
    }
    const topology: Topology = { racks: new Map(), watches: new Map(), dirty: new Set(), fed: null };
    if (needsTopology) {
      for (const row of await loadRows(trx, alarmStateTable, 'scope', ['rack', 'component'])) {
        if (row.scope === 'rack') {
          const rack = row.state as RackState;
          topology.racks.set(rack.rack, rack);
        } else {
          const watch = row.state as ComponentWatch;
          topology.watches.set(watch.component, watch);
        }
      }
    }
    const nodeState = (nodeId: string): AlarmNodeState => {
      let state = nodes.get(nodeId);
      if (!state) {
        state = { liveness: initialLiveness(nodeId, this.#liveness), darkAlarmId: null, gpuAlarms: {} };
        nodes.set(nodeId, state);
      }
      return state;
    };
    const book = new AlarmBook();
    // The backlog alarms open now (of those a heartbeat of the batch may clear), kept up to date through the batch.
    const openBacklog = new Set<string>();
    if (backlogCandidates.size > 0) {
      for (const row of await loadRows(trx, alarmsTable, 'alarm_id', [...backlogCandidates])) if (row.status === 'open') openBacklog.add(row.alarm_id as string);
    }
    const sink: LivenessSink = { transitions: [], gaps: new Map() };

    // Pass 2: the events in order. Nodes that went dark in one event are correlated together after it.
    const pending: Array<{ state: AlarmNodeState; at: number; lastContactAt: number | null; alarmId: string }> = [];
    for (const event of events) {
      const position = event.position;
      book.at(event);
      const correlate = (): void => {
        if (pending.length > 0) this.#correlate(pending.splice(0), position, book, topology);
      };
      forEachLivenessFact(event, (nodeId, fact) => {
        const state = nodeState(nodeId);
        const previousRack = state.liveness.rack;
        sink.transitions.length = 0;
        advanceLiveness(state.liveness, fact, this.#liveness, sink);
        if (fact.kind === 'registered' && previousRack !== fact.rack) this.#moveNode(topology, previousRack, fact.rack, fact.site);
        for (const transition of sink.transitions) {
          if (transition.kind === 'went-dark') {
            pending.push({ state, at: transition.at, lastContactAt: transition.lastContactAt, alarmId: this.#openDark(transition, state, position, book) });
          } else {
            correlate();
            this.#onBack(transition, state, book, topology);
          }
        }
      });
      correlate();
      sink.gaps.clear();
      if (!isAlarmsEvent(event)) continue;
      const at = (event.observedAt ?? event.recordedAt).getTime();
      switch (event.type) {
        case 'TopologyDeclared': {
          const d = event.data;
          const declared: RackTopology = { site: d.site, rack: d.rack, pdu: d.pdu, tor: d.tor, cdu: d.cdu ?? null };
          const existing = topology.racks.get(d.rack);
          topology.racks.set(d.rack, { ...declared, components: componentsOfRack(declared), nodeCount: existing?.nodeCount ?? 0 });
          topology.dirty.add(`rack:${d.rack}`);
          topology.fed = null;
          break;
        }
        case 'GpuXidObserved': {
          const nodeId = nodeIdOfStream(event.stream);
          if (nodeId) this.#onXid(nodeState(nodeId), event.data, position, at, book);
          break;
        }
        case 'GpuTelemetryObserved': {
          const nodeId = nodeIdOfStream(event.stream);
          if (nodeId) this.#onGpuTelemetry(nodeState(nodeId), event.data, position, at, book);
          break;
        }
        case 'StepHeld': {
          // A saga step that cannot go on by itself: an alarm an operator sees, closed when they act on the step.
          const d = event.data;
          const node = d.nodeId ? nodeState(d.nodeId) : undefined;
          book.open(
            openAlarmRow({
              alarmId: `saga-hold:${event.stream}`,
              kind: 'saga-hold',
              severity: 'warning',
              nodeId: d.nodeId ?? null,
              component: event.stream,
              site: node?.liveness.site ?? null,
              rack: node?.liveness.rack ?? null,
              summary: `${d.nodeId ?? event.stream}: ${d.hold} (${d.reason.slice(0, 300)})`,
              evidence: { hold: d.hold, reason: d.reason, stream: event.stream, position },
              at,
              position,
            }),
          );
          break;
        }
        case 'StepOperatorAction':
          book.update(`saga-hold:${event.stream}`, { status: 'closed', closed_at: at, updated_at: at });
          break;
        case 'BmcCertificateChanged':
        case 'BmcCertificateAccepted': {
          const state = nodeState(event.data.nodeId);
          const node = { site: state.liveness.site, rack: state.liveness.rack, certificateAlarmId: state.certificateAlarmId ?? null };
          applyCertificateAlarm(event, node, position, at, book);
          state.certificateAlarmId = node.certificateAlarmId ?? null;
          break;
        }
        case 'ProjectionEventSetAside': {
          const d = event.data;
          const nodeId = nodeIdOfStream(d.stream);
          book.open(
            openAlarmRow({
              alarmId: `set-aside:${d.projection}:${d.position}`,
              kind: 'projection-set-aside',
              severity: 'warning',
              nodeId: nodeId ?? null,
              component: `projection:${d.projection}`,
              site: null,
              rack: null,
              summary: `projection ${d.projection} set event ${d.position} (${d.type}, ${d.stream}) aside: ${d.reason.slice(0, 300)}`,
              evidence: { ...d },
              at,
              position,
            }),
          );
          break;
        }
        case 'SiteReplicationBacklogWarned': {
          const d = event.data;
          const alarmId = backlogAlarmId(d.site, d.slot.slot);
          book.open(
            openAlarmRow({
              alarmId,
              kind: 'replication-backlog',
              severity: d.slot.walStatus === 'lost' ? 'critical' : 'warning',
              nodeId: null,
              component: d.slot.slot,
              site: d.site,
              rack: null,
              summary: d.summary.slice(0, 500),
              evidence: { ...d },
              at,
              position,
            }),
          );
          openBacklog.add(alarmId);
          break;
        }
        case 'SiteHeartbeat': {
          for (const slot of event.data.slots) {
            const alarmId = backlogAlarmId(event.data.site, slot.slot);
            if (backlogShare(slot) < backlogClearShare && openBacklog.delete(alarmId)) book.update(alarmId, { status: 'closed', closed_at: at, updated_at: at });
          }
          break;
        }
        case 'LedgerIntegrityAlarmRaised': {
          const d = event.data;
          book.open(
            openAlarmRow({
              alarmId: `ledger-integrity:${d.code}:${position}`,
              kind: 'ledger-integrity',
              severity: 'critical',
              nodeId: null,
              component: 'ledger',
              site: null,
              rack: null,
              summary: `ledger integrity (${d.code}): ${d.summary.slice(0, 400)}; checkpoint signing stopped`,
              evidence: { ...d },
              at,
              position,
            }),
          );
          break;
        }
        case 'AlarmAcknowledged': {
          const d = event.data;
          book.update(d.alarmId, { acknowledged_by: event.actor.id, acknowledged_at: event.recordedAt.getTime(), ack_note: d.note ?? null });
          break;
        }
        case 'NodeDeclared':
        case 'NodeInventoryObserved':
        case 'FirmwareInventoryObserved': {
          const drift = driftFactOf(event);
          if (!drift) break;
          let state = drifts.get(drift.nodeId);
          if (!state) drifts.set(drift.nodeId, (state = { drift: initialDrift(drift.nodeId), driftAlarmId: null }));
          this.#onDrift(state, drift.fact, position, book);
          break;
        }
        case 'NodeRegistered':
        case 'PollOutcomesRecorded':
        case 'MaintenanceWindowSet':
        case 'NodeDecommissioned':
          // Liveness facts: applied above, before the switch.
          break;
        default:
          assertNever(event);
      }
    }

    const stateRows: Row[] = [
      ...[...nodes.values()].map((state) => ({ key: `node:${state.liveness.nodeId}`, scope: 'node', state })),
      ...[...drifts.values()].map((state) => ({ key: `drift:${state.drift.nodeId}`, scope: 'drift', state })),
    ];
    for (const key of topology.dirty) {
      const [scope, ...rest] = key.split(':');
      const id = rest.join(':');
      const state = scope === 'rack' ? topology.racks.get(id) : topology.watches.get(id);
      if (state) stateRows.push({ key, scope, state });
    }
    await upsertRows(trx, alarmStateTable, stateRows);
    await book.flush(trx);
  }

  #moveNode(topo: Topology, from: string | null, to: string, site: string): void {
    const old = from ? topo.racks.get(from) : undefined;
    if (old) {
      old.nodeCount = Math.max(0, old.nodeCount - 1);
      topo.dirty.add(`rack:${from}`);
    }
    let rack = topo.racks.get(to);
    if (!rack) {
      rack = { site, rack: to, pdu: [], tor: [], cdu: null, components: [], nodeCount: 0 };
      topo.racks.set(to, rack);
    }
    rack.nodeCount += 1;
    topo.dirty.add(`rack:${to}`);
    topo.fed = null;
  }

  #fedNodes(topo: Topology): (component: string) => number {
    if (!topo.fed) {
      const fed = new Map<string, number>();
      for (const rack of topo.racks.values()) for (const component of rack.components) fed.set(component, (fed.get(component) ?? 0) + rack.nodeCount);
      topo.fed = fed;
    }
    const fed = topo.fed;
    return (component) => fed.get(component) ?? 0;
  }

  #openDark(transition: Extract<LivenessTransition, { kind: 'went-dark' }>, state: AlarmNodeState, position: number, book: AlarmBook): string {
    const live = state.liveness;
    const alarmId = `dark:${live.nodeId}:${position}`;
    state.darkAlarmId = alarmId;
    book.open({
      alarm_id: alarmId,
      kind: 'node-dark',
      severity: 'critical',
      status: 'open',
      node_id: live.nodeId,
      component: null,
      site: live.site,
      rack: live.rack,
      parent_id: null,
      summary: `${live.nodeId} missed ${transition.consecutiveMisses} consecutive polls`,
      evidence: { lastContactAt: iso(transition.lastContactAt), consecutiveMisses: transition.consecutiveMisses, detectedAt: iso(transition.at), expectedIntervalS: live.expectedIntervalS },
      opened_at: transition.at,
      opened_position: position,
      updated_at: transition.at,
      closed_at: null,
      acknowledged_by: null,
      acknowledged_at: null,
      ack_note: null,
    });
    return alarmId;
  }

  #correlate(pending: ReadonlyArray<{ state: AlarmNodeState; at: number; lastContactAt: number | null; alarmId: string }>, position: number, book: AlarmBook, topo: Topology): void {
    const darkNodes = pending.flatMap(({ state, at, lastContactAt, alarmId }) => {
      const rack = state.liveness.rack ? topo.racks.get(state.liveness.rack) : undefined;
      if (!rack || rack.components.length === 0) return [];
      for (const component of rack.components) topo.dirty.add(`component:${component}`);
      return [{ node: { nodeId: state.liveness.nodeId, at, lastContactAt, alarmId } as DarkNode, components: rack.components, site: rack.site }];
    });
    if (darkNodes.length === 0) return;
    const fedNodes = this.#fedNodes(topo);
    const decisions = correlateDark(topo.watches, darkNodes, fedNodes, (component) => `root-cause:${component}:${position}`, this.#blast);
    for (const decision of decisions) {
      switch (decision.kind) {
        case 'fold': {
          book.update(decision.node.alarmId, { parent_id: decision.rootAlarmId });
          const watch = topo.watches.get(decision.component)!;
          book.update(decision.rootAlarmId, { evidence: this.#rootEvidence(decision.component, fedNodes(decision.component), watch.rootNodes), updated_at: decision.node.at });
          break;
        }
        case 'supersede': {
          topo.dirty.add(`component:${decision.component}`);
          book.update(decision.rootAlarmId, { status: 'closed', closed_at: decision.at, updated_at: decision.at, parent_id: decision.byRootAlarmId });
          break;
        }
        case 'raise': {
          const [kind, name] = [decision.component.split(':')[0]!, decision.component.split(':').slice(1).join(':')];
          book.open({
            alarm_id: decision.rootAlarmId,
            kind: 'root-cause',
            severity: 'critical',
            status: 'open',
            node_id: null,
            component: decision.component,
            site: darkNodes[0]!.site,
            rack: null,
            parent_id: null,
            summary: `${kindLabel[kind] ?? kind} ${name}: ${decision.nodes.length} of ${decision.fedNodes} nodes it feeds went dark within ${this.#blast.windowS} s`,
            evidence: this.#rootEvidence(decision.component, decision.fedNodes, decision.nodes),
            opened_at: decision.at,
            opened_position: position,
            updated_at: decision.at,
            closed_at: null,
            acknowledged_by: null,
            acknowledged_at: null,
            ack_note: null,
          });
          for (const node of decision.nodes) book.update(node.alarmId, { parent_id: decision.rootAlarmId });
          break;
        }
        default: {
          const unknown: never = decision;
          throw new Error(`unknown blast-radius decision ${JSON.stringify(unknown)}`);
        }
      }
    }
  }

  #onBack(transition: Exclude<LivenessTransition, { kind: 'went-dark' }>, state: AlarmNodeState, book: AlarmBook, topo: Topology): void {
    const live = state.liveness;
    if (state.darkAlarmId) {
      book.update(state.darkAlarmId, { status: 'closed', closed_at: transition.at, updated_at: transition.at });
      state.darkAlarmId = null;
    }
    const rack = live.rack ? topo.racks.get(live.rack) : undefined;
    for (const component of rack?.components ?? []) if (topo.watches.has(component)) topo.dirty.add(`component:${component}`);
    for (const change of onNodeBack(topo.watches, live.nodeId)) {
      topo.dirty.add(`component:${change.component}`);
      const evidence = this.#rootEvidence(change.component, this.#fedNodes(topo)(change.component), change.remaining);
      book.update(
        change.rootAlarmId,
        change.remaining.length === 0 ? { status: 'closed', closed_at: transition.at, updated_at: transition.at } : { evidence, updated_at: transition.at },
      );
    }
  }

  #rootEvidence(component: string, fedNodes: number, nodes: readonly DarkNode[]): Row {
    return {
      component,
      fedNodes,
      windowS: this.#blast.windowS,
      nodes: nodes.map((node) => ({ nodeId: node.nodeId, darkAt: iso(node.at), lastContactAt: iso(node.lastContactAt), alarmId: node.alarmId })),
    };
  }

  #onDrift(state: AlarmDriftState, fact: Parameters<typeof evolveDrift>[1], position: number, book: AlarmBook): void {
    state.drift = evolveDrift(state.drift, fact, this.#compare);
    // A node nobody declared, or one not yet seen, is not a drift alarm (inventory and liveness show those).
    const findings = driftOf(state.drift).filter((field) => field.field !== 'node');
    const at = fact.at;
    if (findings.length > 0) {
      const evidence = { fields: findings.map((f) => ({ field: f.field, kind: f.kind, declared: f.declared, observed: f.observed, since: iso(f.since) })) };
      const summary = `${state.drift.nodeId} differs from its declaration: ${findings.map((f) => `${f.field} (${f.kind})`).join(', ')}`;
      if (state.driftAlarmId) {
        book.update(state.driftAlarmId, { evidence, summary, updated_at: at });
        return;
      }
      const alarmId = `drift:${state.drift.nodeId}:${position}`;
      state.driftAlarmId = alarmId;
      book.open({
        alarm_id: alarmId,
        kind: 'drift',
        severity: 'warning',
        status: 'open',
        node_id: state.drift.nodeId,
        component: null,
        site: state.drift.declared?.site ?? null,
        rack: state.drift.declared?.rack ?? null,
        parent_id: null,
        summary,
        evidence,
        opened_at: at,
        opened_position: position,
        updated_at: at,
        closed_at: null,
        acknowledged_by: null,
        acknowledged_at: null,
        ack_note: null,
      });
    } else if (state.driftAlarmId) {
      book.update(state.driftAlarmId, { status: 'closed', closed_at: at, updated_at: at });
      state.driftAlarmId = null;
    }
  }

  #gpuAlarm(state: AlarmNodeState, alarmId: string, kind: string, severity: string, summary: string, evidence: Row, at: number, position: number): Row {
    return openAlarmRow({ alarmId, kind, severity, nodeId: state.liveness.nodeId, component: null, site: state.liveness.site, rack: state.liveness.rack, summary, evidence, at, position });
  }

  #onXid(state: AlarmNodeState, data: GpuXidObservedData, position: number, at: number, book: AlarmBook): void {
    for (const xid of data.events) {
      if (xid.severity === 'info') continue;
      const key = `xid:${xid.pciBusId}:${xid.xid}`;
      const open = state.gpuAlarms[key];
      if (open) {
        open.occurrences += 1;
        book.update(open.alarmId, { evidence: { xid: xid.xid, pciBusId: xid.pciBusId, meaning: xid.meaning, recommendedAction: xid.recommendedAction, occurrences: open.occurrences, lastMessage: xid.message }, updated_at: at });
        continue;
      }
      const alarmId = `xid:${state.liveness.nodeId}:${xid.pciBusId}:${xid.xid}:${position}`;
      state.gpuAlarms[key] = { alarmId, occurrences: 1 };
      book.open(
        this.#gpuAlarm(
          state,
          alarmId,
          'gpu-xid',
          xid.severity,
          `${state.liveness.nodeId} GPU ${xid.pciBusId}: XID ${xid.xid} ${xid.meaning}`,
          { xid: xid.xid, pciBusId: xid.pciBusId, meaning: xid.meaning, recommendedAction: xid.recommendedAction, occurrences: 1, lastMessage: xid.message },
          at,
          position,
        ),
      );
    }
  }

  #onGpuTelemetry(state: AlarmNodeState, data: GpuTelemetryObservedData, position: number, at: number, book: AlarmBook): void {
    for (const gpu of data.gpus) {
      const key = `ecc:${gpu.index}`;
      const uncorrected = gpu.ecc.uncorrectedVolatile ?? 0;
      const failing = uncorrected > 0 || gpu.remappedRows.failure === true;
      const open = state.gpuAlarms[key];
      if (failing && !open) {
        const alarmId = `ecc:${state.liveness.nodeId}:${gpu.index}:${position}`;
        state.gpuAlarms[key] = { alarmId, occurrences: 1 };
        book.open(
          this.#gpuAlarm(
            state,
            alarmId,
            'gpu-ecc',
            'critical',
            `${state.liveness.nodeId} GPU ${gpu.index}: ${uncorrected} uncorrected ECC errors${gpu.remappedRows.failure ? ', row remapping failed' : ''}`,
            { gpuIndex: gpu.index, uuid: gpu.uuid ?? null, serial: gpu.serial ?? null, ecc: gpu.ecc, remappedRows: gpu.remappedRows },
            at,
            position,
          ),
        );
      } else if (!failing && open) {
        // The volatile counters reset with the GPU: a clean reading after a reset closes the alarm.
        book.update(open.alarmId, { status: 'closed', closed_at: at, updated_at: at });
        delete state.gpuAlarms[key];
      }
    }
  }
}

