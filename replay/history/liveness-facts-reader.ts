/**
 * The liveness facts a replay needs, read from the log: every registration, maintenance window and decommission up
 * to the end of the window, and the poll outcomes from the start of the last run of contacts before the window
 * (`FoldStartFinder`) to its end. For one node, its poll rows come through the node index; for the fleet, the window's
 * batches are read whole and the look-back examines batches newest first (cut down inside PostgreSQL to the nodes
 * still looking for their run, once they are few) until every node has it, or until the few left (silent for long)
 * cost less to finish one by one through the node index.
 */
import type { Kysely } from 'kysely';
import { isEventOf, type EventOf, type RecordedEvent } from '../../events/index.js';
import { forEachLivenessFact, type LivenessOptions } from '../../projections/index.js';
import type { EventStore, DynamicDatabase } from '../../src/ledger/index.js';
import { FoldStartFinder, mergeFacts, type PositionedFact } from './liveness-replay.js';
import { countPollBatches, readNamingNode, readPollsOf, readTypes, type PositionRange } from './log-reads.js';
import { nodeIndexesPresent } from '../../src/ledger/index.js';

export const lifecycleTypes = ['NodeRegistered', 'MaintenanceWindowSet', 'NodeDecommissioned'] as const;

/** Adds the liveness facts one event carries to `into`, per node, in the order they happened in it. */
function collectFacts(event: RecordedEvent, into: Map<string, PositionedFact[]>, only?: ReadonlySet<string>): void {
  forEachLivenessFact(event, (nodeId, fact) => {
    if (only && !only.has(nodeId)) return;
    let facts = into.get(nodeId);
    if (!facts) into.set(nodeId, (facts = []));
    facts.push({ position: event.position, fact });
  });
}

/** One node looking back for its run of contacts: the facts seen so far (newest first) and the finder. */
class LookBack {
  readonly newestFirst: PositionedFact[] = [];
  readonly #finder: FoldStartFinder;

  constructor(lifecycle: readonly PositionedFact[], options: LivenessOptions) {
    this.#finder = new FoldStartFinder(lifecycle, options);
  }

  get found(): boolean {
    return this.#finder.startPosition !== null;
  }

  /** Takes one event's facts (log order), all of them even past the run's start; true once the run is found. */
  take(facts: readonly PositionedFact[]): boolean {
    for (let i = facts.length - 1; i >= 0; i -= 1) {
      this.newestFirst.push(facts[i]!);
      this.#finder.older(facts[i]!);
    }
    return this.found;
  }

  /** The facts the replay needs, in log order. */
  facts(): PositionedFact[] {
    const start = this.#finder.startPosition;
    const kept = start === null ? this.newestFirst : this.newestFirst.filter((fact) => fact.position >= start);
    return [...kept].reverse();
  }
}

/** Looks back for one node through the node index, from `through` down. */
async function lookBackAlone(store: EventStore, nodeId: string, lookBack: LookBack, through: number): Promise<void> {
  const only = new Set([nodeId]);
  let cursor = through;
  for (let pages = 0; cursor > 0 && !lookBack.found; pages += 1) {
    const page = await readPollsOf(store, [nodeId], { after: 0, through: cursor }, { newestFirst: true, limit: Math.min(512, 16 << pages) });
    for (const event of page.events) {
      const facts = new Map<string, PositionedFact[]>();
      collectFacts(event, facts, only);
      if (lookBack.take(facts.get(nodeId) ?? [])) break;
    }
    if (page.scannedTo === null) break;
    cursor = page.scannedTo - 1;
  }
}

/** One node's facts for a replay through the end of `window`, and the window's poll batches cut down to the node. */
export async function nodeLivenessFacts(
  store: EventStore,
  nodeId: string,
  window: PositionRange,
  options: LivenessOptions,
): Promise<{ facts: PositionedFact[]; windowPolls: RecordedEvent<EventOf<'PollOutcomesRecorded'>>[] }> {
  const only = new Set([nodeId]);
  const [lifecycleEvents, windowPolls] = await Promise.all([readNamingNode(store, nodeId, { after: 0, through: window.through }, lifecycleTypes), readPollsOf(store, [nodeId], window)]);
  const lifecycle = new Map<string, PositionedFact[]>();
  for (const event of lifecycleEvents) collectFacts(event, lifecycle, only);
  const outcomes = new Map<string, PositionedFact[]>();
  for (const event of windowPolls.events) collectFacts(event, outcomes, only);
  const own = lifecycle.get(nodeId) ?? [];
  const lookBack = new LookBack(own, options);
  if (window.after > 0) await lookBackAlone(store, nodeId, lookBack, window.after);
  return { facts: mergeFacts(own, [...lookBack.facts(), ...(outcomes.get(nodeId) ?? [])]), windowPolls: windowPolls.events };
}

export interface FleetLivenessFacts {
  /** Per node that the window's events touch, its facts for a replay through the end of the window. */
  facts: Map<string, PositionedFact[]>;
  /** Every registration, maintenance window and decommission up to the end of the window, in log order. */
  lifecycleEvents: RecordedEvent[];
}

/**
 * The facts of every node the window touches (polled in it, or registered, put in maintenance or decommissioned in
 * it), each from the start of its last run of contacts before the window. Nodes not touched by the window do not
 * change in it.
 */
export async function fleetLivenessFacts(store: EventStore, window: PositionRange, options: LivenessOptions): Promise<FleetLivenessFacts> {
  const [lifecycleEvents, windowBatches] = await Promise.all([readTypes(store, lifecycleTypes, { after: 0, through: window.through }), readTypes(store, ['PollOutcomesRecorded'], window)]);
  const lifecycle = new Map<string, PositionedFact[]>();
  for (const event of lifecycleEvents) collectFacts(event, lifecycle);
  const inWindow = new Map<string, PositionedFact[]>();
  for (const event of windowBatches) collectFacts(event, inWindow);
  const touched = new Set<string>(inWindow.keys());
  for (const [nodeId, facts] of lifecycle) if (facts.some((f) => f.position > window.after)) touched.add(nodeId);

  const lookBacks = new Map<string, LookBack>();
  const unresolved = new Set<string>();
  for (const nodeId of touched) {
    const own = lifecycle.get(nodeId) ?? [];
    lookBacks.set(nodeId, new LookBack(own, options));
    // A node is polled once registered: one first registered inside the window has nothing before it to replay.
    const firstRegistration = own.find((f) => f.fact.kind === 'registered');
    if (window.after > 0 && !(firstRegistration && firstRegistration.position > window.after)) unresolved.add(nodeId);
  }

  let cursor = window.after;
  const pageSize = 64;
  const fetchPage = (through: number) => readPollsOf(store, [...unresolved], { after: 0, through }, { newestFirst: true, limit: pageSize });
  // When to stop scanning and finish node by node through the node index (a node silent for days should not make the
  // diff read days of every node's polls): once the scan has cost what finishing alone would. Finishing alone costs
  // about the node's own batches below the cursor each, which the window's batches tell: rows per batch over nodes.
  const perNodeShare = windowBatches.length > 0 && inWindow.size > 0 ? windowBatches.reduce((sum, e) => sum + (isEventOf(e, 'PollOutcomesRecorded') ? e.data.nodeIds.length : 0), 0) / windowBatches.length / inWindow.size : null;
  const batchesBelow = unresolved.size > 0 && perNodeShare !== null && (await nodeIndexesPresent(store.db.withTables<DynamicDatabase>())) ? await countPollBatches(store, cursor) : null;
  const aloneCost = (): number => (batchesBelow === null || perNodeShare === null ? Number.POSITIVE_INFINITY : unresolved.size * Math.max(1, batchesBelow * perNodeShare));
  let examined = 0;
  // The next page is asked for before this one is folded in, so PostgreSQL reads while this process parses.
  let next = unresolved.size > 0 && cursor > 0 ? fetchPage(cursor) : null;
  while (next) {
    const page = await next;
    // The last page examined everything down to the start of the log.
    cursor = page.scannedTo === null ? 0 : page.scannedTo - 1;
    examined += page.scannedTo === null ? page.events.length : pageSize;
    next = cursor > 0 && examined < aloneCost() ? fetchPage(cursor) : null;
    for (const event of page.events) {
      const facts = new Map<string, PositionedFact[]>();
      collectFacts(event, facts, unresolved);
      for (const [nodeId, nodeFacts] of facts) if (lookBacks.get(nodeId)!.take(nodeFacts)) unresolved.delete(nodeId);
    }
    if (next && (unresolved.size === 0 || examined >= aloneCost())) {
      // Asked for in vain: every node has its run, or the few left are cheaper alone.
      await next.catch(() => undefined);
      next = null;
    }
  }
  // Nodes still looking (silent for long): each through the node index, from where the scan stopped.
  if (cursor > 0) for (const nodeId of unresolved) await lookBackAlone(store, nodeId, lookBacks.get(nodeId)!, cursor);

  const facts = new Map<string, PositionedFact[]>();
  for (const nodeId of touched) facts.set(nodeId, mergeFacts(lifecycle.get(nodeId) ?? [], [...lookBacks.get(nodeId)!.facts(), ...(inWindow.get(nodeId) ?? [])]));
  return { facts, lifecycleEvents };
}
