/**
 * From recorded events to liveness facts, per node. Poll outcome batches are columnar (v2): each row's time is
 * `windowStart + offsetMs`. Pure.
 */
import { assertNever, eventGuard, type RecordedEvent } from '../../events/index.js';
import type { LivenessFact } from './liveness-evolve.js';

export const livenessEventTypes = ['NodeRegistered', 'PollOutcomesRecorded', 'MaintenanceWindowSet', 'NodeDecommissioned'] as const;

/** Whether an event is one of those that carry liveness facts (other types carry none). */
export const isLivenessEvent = eventGuard(livenessEventTypes);

/** Calls `emit(nodeId, fact)` for every liveness fact the event carries, in the order they happened in it. */
export function forEachLivenessFact(event: RecordedEvent, emit: (nodeId: string, fact: LivenessFact) => void): void {
  if (!isLivenessEvent(event)) return;
  const at = event.recordedAt.getTime();
  switch (event.type) {
    case 'NodeRegistered': {
      const data = event.data;
      emit(data.nodeId, { kind: 'registered', at, site: data.site, rack: data.rack, expectedIntervalS: data.expectedIntervalS ?? 60 });
      return;
    }
    case 'MaintenanceWindowSet': {
      const data = event.data;
      emit(data.nodeId, { kind: 'maintenance', at, from: Date.parse(data.from), until: Date.parse(data.until) });
      return;
    }
    case 'NodeDecommissioned': {
      emit(event.data.nodeId, { kind: 'decommissioned', at });
      return;
    }
    case 'PollOutcomesRecorded': {
      const batch = event.data;
      const start = Date.parse(batch.windowStart);
      for (let i = 0; i < batch.nodeIds.length; i += 1) {
        // Absence is measured by the liveness checks. A heavy read (health, inventory, firmware) that succeeded
        // is a contact too; one that failed is not a miss: the BMC may have answered everything but one slow
        // resource, and its own liveness check says whether it is there.
        if (batch.work[i] !== 'liveness' && batch.outcomes[i] !== 'success') continue;
        emit(batch.nodeIds[i]!, { kind: 'outcome', at: start + batch.offsetMs[i]!, outcome: batch.outcomes[i]! });
      }
      return;
    }
    default:
      assertNever(event);
  }
}

/** Adds to `into` the node ids an event carries liveness facts for. */
export function livenessNodeIds(event: RecordedEvent, into: Set<string>): void {
  if (!isLivenessEvent(event)) return;
  switch (event.type) {
    case 'PollOutcomesRecorded':
      for (const nodeId of event.data.nodeIds) into.add(nodeId);
      return;
    case 'NodeRegistered':
    case 'MaintenanceWindowSet':
    case 'NodeDecommissioned':
      into.add(event.data.nodeId);
      return;
    default:
      assertNever(event);
  }
}
