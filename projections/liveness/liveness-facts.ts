/**
 * From recorded events to liveness facts, per node. Poll outcome batches are columnar (v2): each row's time is
 * `windowStart + offsetMs`. Pure.
 */
import type { PollOutcomesBatch, RecordedEvent } from '../../events/index.js';
import type { LivenessFact } from './liveness-evolve.js';

export const livenessEventTypes = ['NodeRegistered', 'PollOutcomesRecorded', 'MaintenanceWindowSet', 'NodeDecommissioned'] as const;

/** Calls `emit(nodeId, fact)` for every liveness fact the event carries, in the order they happened in it. */
export function forEachLivenessFact(event: RecordedEvent, emit: (nodeId: string, fact: LivenessFact) => void): void {
  const at = event.recordedAt.getTime();
  switch (event.type) {
    case 'NodeRegistered': {
      const data = event.data as { nodeId: string; site: string; rack: string; expectedIntervalS?: number };
      emit(data.nodeId, { kind: 'registered', at, site: data.site, rack: data.rack, expectedIntervalS: data.expectedIntervalS ?? 60 });
      return;
    }
    case 'MaintenanceWindowSet': {
      const data = event.data as { nodeId: string; from: string; until: string };
      emit(data.nodeId, { kind: 'maintenance', at, from: Date.parse(data.from), until: Date.parse(data.until) });
      return;
    }
    case 'NodeDecommissioned': {
      emit((event.data as { nodeId: string }).nodeId, { kind: 'decommissioned', at });
      return;
    }
    case 'PollOutcomesRecorded': {
      const batch = event.data as PollOutcomesBatch;
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
      return;
  }
}

/** Adds to `into` the node ids an event carries liveness facts for. */
export function livenessNodeIds(event: RecordedEvent, into: Set<string>): void {
  switch (event.type) {
    case 'PollOutcomesRecorded':
      for (const nodeId of (event.data as PollOutcomesBatch).nodeIds) into.add(nodeId);
      return;
    case 'NodeRegistered':
    case 'MaintenanceWindowSet':
    case 'NodeDecommissioned':
      into.add((event.data as { nodeId: string }).nodeId);
      return;
    default:
      return;
  }
}
