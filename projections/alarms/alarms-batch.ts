/**
 * What one batch of the alarms projection works on: the per-node states its events touch (liveness and GPU alarms
 * under `node:<id>`, drift under `drift:<id>`) and, when a liveness fact or a topology declaration is in the batch,
 * the declared topology (racks and the components that feed them). Loaded in one query per scope before the events
 * are applied, written back in one upsert after.
 */
import type { Transaction } from 'kysely';
import type { RecordedEvent } from '../../events/index.js';
import { assertNever, eventGuard } from '../../events/index.js';
import type { DynamicDatabase } from '../../src/ledger/index.js';
import type { ComponentWatch, RackTopology } from '../blast-radius/blast-radius-evolve.js';
import type { NodeDrift } from '../drift/drift-evolve.js';
import { driftFactOf } from '../drift/drift-facts.js';
import type { NodeLiveness } from '../liveness/liveness-evolve.js';
import { loadRows, nodeIdOfStream, upsertRows, type Row } from '../support/table.js';
import { alarmsEventTypes } from './alarms-event-types.js';
import { alarmStateTable, alarmsTable } from './alarms-table.js';
import { backlogAlarmId, backlogClearShare, backlogShare } from './recorded-alarms.js';

export const isAlarmsEvent = eventGuard(alarmsEventTypes);

/** Per node, kept under `node:<id>`: what liveness and GPU alarms need. */
export interface AlarmNodeState {
  liveness: NodeLiveness;
  darkAlarmId: string | null;
  gpuAlarms: Record<string, { alarmId: string; occurrences: number }>;
  /** The changed-certificate alarm open for the node (`certificate-alarms.ts`); absent in states written before it. */
  certificateAlarmId?: string | null;
}

/** Per node, kept apart under `drift:<id>` (it is larger, and most batches do not touch it). */
export interface AlarmDriftState {
  drift: NodeDrift;
  driftAlarmId: string | null;
}

export interface RackState extends RackTopology {
  components: string[];
  nodeCount: number;
}

export interface Topology {
  racks: Map<string, RackState>;
  watches: Map<string, ComponentWatch>;
  /** `rack:<id>` and `component:<id>` keys changed in this batch. */
  dirty: Set<string>;
  fed: Map<string, number> | null;
}

export interface AlarmsBatch {
  nodes: Map<string, AlarmNodeState>;
  drifts: Map<string, AlarmDriftState>;
  topology: Topology;
  /** The backlog alarms open now, of those a heartbeat of the batch may clear; kept up to date through the batch. */
  openBacklog: Set<string>;
}

interface BatchScope {
  touched: Set<string>;
  driftTouched: Set<string>;
  needsTopology: boolean;
  /** Backlog alarms a heartbeat of the batch may clear: which of them are open is read once. */
  backlogCandidates: Set<string>;
}

/** Every node the batch touches, so that their states load in one query each. */
function scopeOf(events: readonly RecordedEvent[]): BatchScope {
  const scope: BatchScope = { touched: new Set(), driftTouched: new Set(), needsTopology: false, backlogCandidates: new Set() };
  for (const event of events) {
    if (!isAlarmsEvent(event)) continue;
    switch (event.type) {
      case 'PollOutcomesRecorded':
        for (const nodeId of event.data.nodeIds) scope.touched.add(nodeId);
        scope.needsTopology = true;
        break;
      case 'NodeRegistered':
      case 'MaintenanceWindowSet':
      case 'NodeDecommissioned':
        scope.touched.add(event.data.nodeId);
        scope.needsTopology = true;
        break;
      case 'TopologyDeclared':
        scope.needsTopology = true;
        break;
      case 'GpuXidObserved':
      case 'GpuTelemetryObserved': {
        const nodeId = nodeIdOfStream(event.stream);
        if (nodeId) scope.touched.add(nodeId);
        break;
      }
      case 'StepHeld':
        if (event.data.nodeId) scope.touched.add(event.data.nodeId);
        break;
      case 'BmcCertificateChanged':
      case 'BmcCertificateAccepted':
        scope.touched.add(event.data.nodeId);
        break;
      case 'NodeDeclared':
      case 'NodeInventoryObserved':
      case 'FirmwareInventoryObserved': {
        const drift = driftFactOf(event);
        if (drift) scope.driftTouched.add(drift.nodeId);
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
        for (const slot of event.data.slots) if (backlogShare(slot) < backlogClearShare) scope.backlogCandidates.add(backlogAlarmId(event.data.site, slot.slot));
        break;
      default:
        assertNever(event);
    }
  }
  return scope;
}

/** The states the batch's events touch, as stored (a node never seen has none yet). */
export async function loadAlarmsBatch(trx: Transaction<DynamicDatabase>, events: readonly RecordedEvent[]): Promise<AlarmsBatch> {
  const scope = scopeOf(events);
  const batch: AlarmsBatch = { nodes: new Map(), drifts: new Map(), topology: { racks: new Map(), watches: new Map(), dirty: new Set(), fed: null }, openBacklog: new Set() };
  const keys = [...[...scope.touched].map((id) => `node:${id}`), ...[...scope.driftTouched].map((id) => `drift:${id}`)];
  for (const row of await loadRows(trx, alarmStateTable, 'key', keys)) {
    if (row.scope === 'node') {
      const state = row.state as AlarmNodeState;
      batch.nodes.set(state.liveness.nodeId, state);
    } else {
      const state = row.state as AlarmDriftState;
      batch.drifts.set(state.drift.nodeId, state);
    }
  }
  if (scope.needsTopology) {
    for (const row of await loadRows(trx, alarmStateTable, 'scope', ['rack', 'component'])) {
      if (row.scope === 'rack') {
        const rack = row.state as RackState;
        batch.topology.racks.set(rack.rack, rack);
      } else {
        const watch = row.state as ComponentWatch;
        batch.topology.watches.set(watch.component, watch);
      }
    }
  }
  if (scope.backlogCandidates.size > 0) {
    for (const row of await loadRows(trx, alarmsTable, 'alarm_id', [...scope.backlogCandidates])) if (row.status === 'open') batch.openBacklog.add(String(row.alarm_id));
  }
  return batch;
}

/** Writes back every node state loaded or created, and the racks and components the batch changed. */
export async function saveAlarmsBatch(trx: Transaction<DynamicDatabase>, batch: AlarmsBatch): Promise<void> {
  const rows: Row[] = [
    ...[...batch.nodes.values()].map((state) => ({ key: `node:${state.liveness.nodeId}`, scope: 'node', state })),
    ...[...batch.drifts.values()].map((state) => ({ key: `drift:${state.drift.nodeId}`, scope: 'drift', state })),
  ];
  for (const key of batch.topology.dirty) {
    const [scope, ...rest] = key.split(':');
    const id = rest.join(':');
    const state = scope === 'rack' ? batch.topology.racks.get(id) : batch.topology.watches.get(id);
    if (state) rows.push({ key, scope, state });
  }
  await upsertRows(trx, alarmStateTable, rows);
}
