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
import { assertNever, type GpuTelemetryObservedData, type GpuXidObservedData, type RecordedEvent } from '../../events/index.js';
import {
  componentsOfRack,
  defaultBlastRadiusOptions,
  correlateDark,
  onNodeBack,
  type BlastRadiusOptions,
  type DarkNode,
  type RackTopology,
} from '../blast-radius/blast-radius-evolve.js';
import { driftOf, evolveDrift, initialDrift, type FirmwareComparator } from '../drift/drift-evolve.js';
import { driftFactOf } from '../drift/drift-facts.js';
import { dialectFirmwareComparator } from '../drift/firmware-comparator.js';
import { advanceLiveness, defaultLivenessOptions, initialLiveness, type LivenessOptions, type LivenessSink, type LivenessTransition } from '../liveness/liveness-evolve.js';
import { forEachLivenessFact } from '../liveness/liveness-facts.js';
import type { Projection } from '../projection.js';
import { createTable, nodeIdOfStream, type Row, holdTablesForRebuild, type HeldTables } from '../support/table.js';
import { AlarmBook } from './alarm-book.js';
import { createHistoryView } from '../support/version-views.js';
import { createVersionsTable, versionsTableName } from '../support/versions.js';
import { alarmsHistoryView, alarmsTable, alarmStateTable } from './alarms-table.js';
import type { DynamicDatabase } from '../../src/ledger/index.js';
import { iso, kindLabel, openAlarmRow } from './alarm-row.js';
import { applyCertificateAlarm } from './certificate-alarms.js';
import { alarmsEventTypes } from './alarms-event-types.js';
import { isAlarmsEvent, loadAlarmsBatch, saveAlarmsBatch, type AlarmDriftState, type AlarmNodeState, type AlarmsBatch, type Topology } from './alarms-batch.js';
import { backlogAlarm, backlogAlarmId, backlogClearShare, backlogShare, integrityAlarm, sagaHoldAlarm, setAsideAlarm } from './recorded-alarms.js';

export interface AlarmsOptions {
  liveness?: Partial<LivenessOptions>;
  blastRadius?: Partial<BlastRadiusOptions>;
  compareFirmware?: FirmwareComparator;
}

/** A node that went dark in the event being applied: correlated with the others of that event once it is done. */
type PendingDark = { state: AlarmNodeState; at: number; lastContactAt: number | null; alarmId: string };

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
    const batch = await loadAlarmsBatch(trx, events);
    const book = new AlarmBook();
    const sink: LivenessSink = { transitions: [], gaps: new Map() };
    const pending: PendingDark[] = [];
    for (const event of events) this.#applyEvent(event, batch, book, sink, pending);
    await saveAlarmsBatch(trx, batch);
    await book.flush(trx);
  }

  #nodeState(batch: AlarmsBatch, nodeId: string): AlarmNodeState {
    let state = batch.nodes.get(nodeId);
    if (!state) {
      state = { liveness: initialLiveness(nodeId, this.#liveness), darkAlarmId: null, gpuAlarms: {} };
      batch.nodes.set(nodeId, state);
    }
    return state;
  }

  /** One event, in log order: its liveness facts first (nodes that went dark in it are correlated together), then the rest. */
  #applyEvent(event: RecordedEvent, batch: AlarmsBatch, book: AlarmBook, sink: LivenessSink, pending: PendingDark[]): void {
    const position = event.position;
    const topology = batch.topology;
    book.at(event);
    const correlate = (): void => {
      if (pending.length > 0) this.#correlate(pending.splice(0), position, book, topology);
    };
    forEachLivenessFact(event, (nodeId, fact) => {
      const state = this.#nodeState(batch, nodeId);
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
    if (!isAlarmsEvent(event)) return;
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
        if (nodeId) this.#onXid(this.#nodeState(batch, nodeId), event.data, position, at, book);
        break;
      }
      case 'GpuTelemetryObserved': {
        const nodeId = nodeIdOfStream(event.stream);
        if (nodeId) this.#onGpuTelemetry(this.#nodeState(batch, nodeId), event.data, position, at, book);
        break;
      }
      case 'StepHeld': {
        const node = event.data.nodeId ? this.#nodeState(batch, event.data.nodeId).liveness : undefined;
        book.open(sagaHoldAlarm(event, node, at));
        break;
      }
      case 'StepOperatorAction':
        book.update(`saga-hold:${event.stream}`, { status: 'closed', closed_at: at, updated_at: at });
        break;
      case 'BmcCertificateChanged':
      case 'BmcCertificateAccepted': {
        const state = this.#nodeState(batch, event.data.nodeId);
        const node = { site: state.liveness.site, rack: state.liveness.rack, certificateAlarmId: state.certificateAlarmId ?? null };
        applyCertificateAlarm(event, node, position, at, book);
        state.certificateAlarmId = node.certificateAlarmId ?? null;
        break;
      }
      case 'ProjectionEventSetAside':
        book.open(setAsideAlarm(event.data, nodeIdOfStream(event.data.stream) ?? null, at, position));
        break;
      case 'LedgerIntegrityAlarmRaised':
        book.open(integrityAlarm(event.data, at, position));
        break;
      case 'SiteReplicationBacklogWarned': {
        const alarm = backlogAlarm(event.data, at, position);
        book.open(alarm);
        batch.openBacklog.add(String(alarm.alarm_id));
        break;
      }
      case 'SiteHeartbeat':
        for (const slot of event.data.slots) {
          const alarmId = backlogAlarmId(event.data.site, slot.slot);
          if (backlogShare(slot) < backlogClearShare && batch.openBacklog.delete(alarmId)) book.update(alarmId, { status: 'closed', closed_at: at, updated_at: at });
        }
        break;
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
        let state = batch.drifts.get(drift.nodeId);
        if (!state) batch.drifts.set(drift.nodeId, (state = { drift: initialDrift(drift.nodeId), driftAlarmId: null }));
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

  #correlate(pending: readonly PendingDark[], position: number, book: AlarmBook, topo: Topology): void {
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

