/** From recorded events to drift facts, per node (observations name their node by stream). Pure. */
import type { EbomRow, FirmwareInventoryObservedData, NodeInventoryObservedData, RecordedEvent } from '../../events/index.js';
import { nodeIdOfStream } from '../support/table.js';
import type { DriftFact } from './drift-evolve.js';

export const driftEventTypes = ['NodeDeclared', 'NodeInventoryObserved', 'FirmwareInventoryObserved'] as const;

export function driftFactOf(event: RecordedEvent): { nodeId: string; fact: DriftFact } | null {
  const at = (event.observedAt ?? event.recordedAt).getTime();
  switch (event.type) {
    case 'NodeDeclared': {
      const data = event.data as { importId: string; declaration: EbomRow };
      return { nodeId: data.declaration.nodeId, fact: { kind: 'declared', at: event.recordedAt.getTime(), importId: data.importId, declaration: data.declaration } };
    }
    case 'NodeInventoryObserved': {
      const nodeId = nodeIdOfStream(event.stream);
      return nodeId ? { nodeId, fact: { kind: 'inventory', at, data: event.data as NodeInventoryObservedData } } : null;
    }
    case 'FirmwareInventoryObserved': {
      const nodeId = nodeIdOfStream(event.stream);
      return nodeId ? { nodeId, fact: { kind: 'firmware', at, data: event.data as FirmwareInventoryObservedData } } : null;
    }
    default:
      return null;
  }
}
