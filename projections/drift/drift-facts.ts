/** From recorded events to drift facts, per node (observations name their node by stream). Pure. */
import { assertNever, eventGuard, type RecordedEvent } from '../../events/index.js';
import { nodeIdOfStream } from '../support/table.js';
import type { DriftFact } from './drift-evolve.js';

export const driftEventTypes = ['NodeDeclared', 'NodeInventoryObserved', 'FirmwareInventoryObserved'] as const;

/** Whether an event is one of those that carry drift facts (other types carry none). */
export const isDriftEvent = eventGuard(driftEventTypes);

export function driftFactOf(event: RecordedEvent): { nodeId: string; fact: DriftFact } | null {
  if (!isDriftEvent(event)) return null;
  const at = (event.observedAt ?? event.recordedAt).getTime();
  switch (event.type) {
    case 'NodeDeclared': {
      const data = event.data;
      return { nodeId: data.declaration.nodeId, fact: { kind: 'declared', at: event.recordedAt.getTime(), importId: data.importId, declaration: data.declaration } };
    }
    case 'NodeInventoryObserved': {
      const nodeId = nodeIdOfStream(event.stream);
      return nodeId ? { nodeId, fact: { kind: 'inventory', at, data: event.data } } : null;
    }
    case 'FirmwareInventoryObserved': {
      const nodeId = nodeIdOfStream(event.stream);
      return nodeId ? { nodeId, fact: { kind: 'firmware', at, data: event.data } } : null;
    }
    default:
      return assertNever(event);
  }
}
