/**
 * Nodes joining and leaving the fleet in a window, from registrations and decommissions: a registration of a node
 * not in the fleet (never registered, or decommissioned since) is a join, one of a node in the fleet at another
 * place is a move, a decommission of a node in the fleet is a leave. Pure: lifecycle events in log order in.
 */
import { assertNever, eventGuard, type RecordedEvent } from '../../events/index.js';

const isMembershipEvent = eventGuard(['NodeRegistered', 'NodeDecommissioned']);
import type { PositionRange } from './log-reads.js';

export interface MembershipChange {
  nodeId: string;
  position: number;
  at: string;
  /** Where the node is (joined, moved) or was (left). */
  site: string | null;
  rack: string | null;
  /** Where it was before a move. */
  previousSite?: string | null;
  previousRack?: string | null;
  reason?: string;
  by: string;
  role: string | null;
}

export interface MembershipChanges {
  joined: MembershipChange[];
  left: MembershipChange[];
  moved: MembershipChange[];
}

/** `events`: every NodeRegistered and NodeDecommissioned up to the end of the window, in log order. */
export function membershipChanges(events: readonly RecordedEvent[], window: PositionRange): MembershipChanges {
  const nodes = new Map<string, { present: boolean; site: string | null; rack: string | null }>();
  const changes: MembershipChanges = { joined: [], left: [], moved: [] };
  for (const event of events) {
    if (!isMembershipEvent(event)) continue;
    const inWindow = event.position > window.after && event.position <= window.through;
    const actor = event.actor as { id: string; role?: string };
    const base = { position: event.position, at: event.recordedAt.toISOString(), by: actor.id, role: actor.role ?? null };
    switch (event.type) {
      case 'NodeRegistered': {
        const data = event.data;
        const before = nodes.get(data.nodeId);
        if (inWindow) {
          if (!before?.present) changes.joined.push({ nodeId: data.nodeId, site: data.site, rack: data.rack, ...base });
          else if (before.site !== data.site || before.rack !== data.rack) {
            changes.moved.push({ nodeId: data.nodeId, site: data.site, rack: data.rack, previousSite: before.site, previousRack: before.rack, ...base });
          }
        }
        nodes.set(data.nodeId, { present: true, site: data.site, rack: data.rack });
        break;
      }
      case 'NodeDecommissioned': {
        const data = event.data;
        const before = nodes.get(data.nodeId);
        if (inWindow && before?.present) changes.left.push({ nodeId: data.nodeId, site: before.site, rack: before.rack, reason: data.reason, ...base });
        nodes.set(data.nodeId, { present: false, site: before?.site ?? null, rack: before?.rack ?? null });
        break;
      }
      default:
        assertNever(event);
    }
  }
  return changes;
}
