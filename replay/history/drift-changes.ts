/**
 * Drift opened and closed in a window, by the drift projection's rule (`evolveDrift` with the dialects' firmware
 * comparison): a field opens when it stops matching the declaration (missing, unexpected, mismatch) or changes
 * from one of these kinds to another, and closes when it matches again or is no longer compared. Each node's
 * declarations and observations are folded from the start of the log, so the state before the window is exact. Pure.
 */
import type { RecordedEvent } from '../../events/index.js';
import { dialectFirmwareComparator, driftFactOf, driftOf, evolveDrift, initialDrift, type DriftField, type FirmwareComparator, type NodeDrift } from '../../projections/index.js';
import type { PositionRange } from './log-reads.js';

export interface DriftChange {
  nodeId: string;
  field: string;
  /** On opening: what it became; on closing: what it was. */
  kind: 'missing' | 'unexpected' | 'mismatch';
  declared: string | null;
  observed: string | null;
  position: number;
  at: string;
}

function openFields(state: NodeDrift): Map<string, DriftField> {
  return new Map(driftOf(state).map((field) => [field.field, field]));
}

/** `events`: per node, its drift facts (declarations, inventory and firmware observations) up to the end of the window. */
export function driftChanges(events: ReadonlyMap<string, readonly RecordedEvent[]>, window: PositionRange, compare: FirmwareComparator = dialectFirmwareComparator): { opened: DriftChange[]; closed: DriftChange[] } {
  const opened: DriftChange[] = [];
  const closed: DriftChange[] = [];
  for (const [nodeId, nodeEvents] of events) {
    let state = initialDrift(nodeId);
    let open = new Map<string, DriftField>();
    for (const event of nodeEvents) {
      const found = driftFactOf(event);
      if (!found || found.nodeId !== nodeId) continue;
      state = evolveDrift(state, found.fact, compare);
      const now = openFields(state);
      if (event.position > window.after && event.position <= window.through) {
        const at = (event.observedAt ?? event.recordedAt).toISOString();
        for (const [field, value] of now) {
          const before = open.get(field);
          if (!before || before.kind !== value.kind) opened.push({ nodeId, field, kind: value.kind as DriftChange['kind'], declared: value.declared, observed: value.observed, position: event.position, at });
        }
        for (const [field, value] of open) {
          if (!now.has(field)) closed.push({ nodeId, field, kind: value.kind as DriftChange['kind'], declared: value.declared, observed: value.observed, position: event.position, at });
        }
      }
      open = now;
    }
  }
  const order = (a: DriftChange, b: DriftChange): number => a.position - b.position || a.field.localeCompare(b.field);
  return { opened: opened.sort(order), closed: closed.sort(order) };
}
