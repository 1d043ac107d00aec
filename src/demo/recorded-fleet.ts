import { NodeDecommissioned, NodeRegistered, type EventData, type RecordedEvent } from '../../events/index.js';
import type { EventStore } from '../ledger/index.js';
import { withBoundedRetries, type RetryPolicy } from './bounded-retry.js';

export type NodeRegistration = EventData<typeof NodeRegistered>;

/** What the log says of one node now: its current registration, or that it was decommissioned after it. */
export interface RecordedNode {
  registration: NodeRegistration | null;
  /** Position of the event that made it so: a change appended after it gets an id of its own. */
  position: number;
}

/** The event types that decide whether a node is registered, and where. */
export const registrationEventTypes = ['NodeRegistered', 'NodeDecommissioned'] as const;

/**
 * Folds registrations and decommissions, in log order, into each node's current state. Only events in the node's
 * own stream (`node-<id>`) count, as for the intents the API records. Pure.
 */
export function foldRecordedFleet(events: Iterable<RecordedEvent>, into: Map<string, RecordedNode> = new Map()): Map<string, RecordedNode> {
  for (const event of events) {
    if (event.type === 'NodeRegistered') {
      const parsed = NodeRegistered.schema.safeParse(event.data);
      if (parsed.success && event.stream === `node-${parsed.data.nodeId}`) into.set(parsed.data.nodeId, { registration: parsed.data, position: event.position });
    } else if (event.type === 'NodeDecommissioned') {
      const parsed = NodeDecommissioned.schema.safeParse(event.data);
      if (parsed.success && event.stream === `node-${parsed.data.nodeId}` && into.has(parsed.data.nodeId)) into.set(parsed.data.nodeId, { registration: null, position: event.position });
    }
  }
  return into;
}

/** Reads every node's current registration from the log, in pages, each page retried while the database is busy. */
export async function readRecordedFleet(store: EventStore, retry?: RetryPolicy): Promise<Map<string, RecordedNode>> {
  const fleet = new Map<string, RecordedNode>();
  const pageSize = 5_000;
  for (let from = 1; ; ) {
    const page = await withBoundedRetries('reading the recorded fleet', () => store.readAll({ fromPosition: from, limit: pageSize, types: registrationEventTypes }), retry);
    foldRecordedFleet(page, fleet);
    if (page.length < pageSize) return fleet;
    from = page[page.length - 1]!.position + 1;
  }
}

/** Two registrations say the same thing (where the node is, how to reach its BMC, how often it reports). */
export function sameRegistration(a: NodeRegistration, b: NodeRegistration): boolean {
  return (
    a.nodeId === b.nodeId &&
    a.site === b.site &&
    a.rack === b.rack &&
    a.expectedIntervalS === b.expectedIntervalS &&
    a.bmc.protocol === b.bmc.protocol &&
    a.bmc.address === b.bmc.address &&
    a.bmc.credentialRef === b.bmc.credentialRef &&
    a.bmc.sessionLimit === b.bmc.sessionLimit
  );
}

/**
 * The port the simulated fleet was registered at, if the log has one: the simulator listens there again, so a
 * restart finds every BMC at its recorded address and has nothing to re-register. The most common port wins.
 */
export function recordedSimulatorPort(fleet: ReadonlyMap<string, RecordedNode>): number | undefined {
  const counts = new Map<number, number>();
  for (const { registration } of fleet.values()) {
    if (!registration?.bmc.credentialRef.startsWith(simulatedCredentialPrefix)) continue;
    const port = Number(URL.canParse(registration.bmc.address) ? new URL(registration.bmc.address).port : Number.NaN);
    if (Number.isInteger(port) && port > 0) counts.set(port, (counts.get(port) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
}

/** The credential references of simulated BMCs: how the demo knows which recorded nodes are its own. */
export const simulatedCredentialPrefix = 'sim:';
