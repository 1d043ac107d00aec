/**
 * Blast radius: which shared component (PDU, top-of-rack switch, coolant unit) a set of dark nodes points at.
 * Nodes that share a component and go dark within a short window, in numbers past a threshold, are one failure
 * of that component: one root-cause alarm with the evidence, and the per-node dark alarms folded under it.
 * Independent failures (nodes that share nothing) raise none. Pure: state in, decisions out.
 */

export type ComponentKind = 'pdu' | 'tor' | 'cdu';

export interface RackTopology {
  site: string;
  rack: string;
  pdu: string[];
  tor: string[];
  cdu: string | null;
}

export interface BlastRadiusOptions {
  /** Dark transitions further apart than this are not one event. */
  windowS: number;
  /** This many dark nodes under one component raise a root cause... */
  minNodes: number;
  /** ...and so does this share of the nodes it feeds (never fewer than two nodes). */
  minShare: number;
}

export const defaultBlastRadiusOptions: BlastRadiusOptions = { windowS: 120, minNodes: 3, minShare: 0.5 };

/** `pdu:P1`, `tor:T7`, `cdu:C2`: component ids are unique per kind. */
export function componentsOfRack(topology: RackTopology): string[] {
  return [...topology.pdu.map((id) => `pdu:${id}`), ...topology.tor.map((id) => `tor:${id}`), ...(topology.cdu ? [`cdu:${topology.cdu}`] : [])];
}

export interface DarkNode {
  nodeId: string;
  at: number;
  lastContactAt: number | null;
  alarmId: string;
}

export interface ComponentWatch {
  component: string;
  /** Dark transitions under this component not yet attributed to a root cause, within the window. */
  recentDark: DarkNode[];
  /** The open root-cause alarm on this component, and the nodes under it that are still dark. */
  rootAlarmId: string | null;
  rootNodes: DarkNode[];
  rootOpenedAt: number | null;
}

export function emptyWatch(component: string): ComponentWatch {
  return { component, recentDark: [], rootAlarmId: null, rootNodes: [], rootOpenedAt: null };
}

export type BlastDecision =
  | { kind: 'fold'; rootAlarmId: string; component: string; node: DarkNode }
  | { kind: 'raise'; rootAlarmId: string; component: string; nodes: DarkNode[]; fedNodes: number; at: number }
  | { kind: 'supersede'; rootAlarmId: string; component: string; byRootAlarmId: string; byComponent: string; at: number };

const kindOrder: Record<string, number> = { pdu: 0, tor: 1, cdu: 2 };

function meets(count: number, fed: number, options: BlastRadiusOptions): boolean {
  return count >= 2 && (count >= options.minNodes || (fed > 0 && count >= Math.ceil(options.minShare * fed)));
}

function rootOf(watches: Map<string, ComponentWatch>, nodeId: string): ComponentWatch | null {
  for (const watch of watches.values()) if (watch.rootAlarmId && watch.rootNodes.some((n) => n.nodeId === nodeId)) return watch;
  return null;
}

/**
 * Nodes went dark (all those of one poll flush, so that simultaneous failures are judged together).
 * `watches` holds the components (mutated in place: the caller owns the batch's copy); each dark node comes with
 * the components feeding it; `fedNodes(component)` says how many nodes a component feeds.
 *
 * The best explanation of a node is the component with the most dark nodes in the window, then the highest share
 * of the nodes it feeds, then PDU before ToR before CDU. A root cause raised early on a narrower component (a ToR,
 * when the first dark nodes were all in one rack) is superseded when a wider one (the PDU feeding that rack and
 * the next) explains all of its nodes: it is closed and folded under the new root, its nodes moved.
 */
export function correlateDark(
  watches: Map<string, ComponentWatch>,
  darkNodes: ReadonlyArray<{ node: DarkNode; components: readonly string[] }>,
  fedNodes: (component: string) => number,
  rootAlarmIdFor: (component: string) => string,
  options: BlastRadiusOptions = defaultBlastRadiusOptions,
): BlastDecision[] {
  for (const { node, components } of darkNodes) {
    const horizon = node.at - options.windowS * 1000;
    for (const component of components) {
      let watch = watches.get(component);
      if (!watch) watches.set(component, (watch = emptyWatch(component)));
      watch.recentDark = [...watch.recentDark.filter((entry) => entry.at >= horizon && entry.nodeId !== node.nodeId), node];
    }
  }
  const decisions: BlastDecision[] = [];
  for (const { node, components } of darkNodes) {
    if (rootOf(watches, node.nodeId)) continue;
    let best: { watch: ComponentWatch; count: number; share: number; order: number } | null = null;
    for (const component of components) {
      const watch = watches.get(component)!;
      const count = watch.recentDark.length;
      const fed = fedNodes(component);
      if (!meets(count, fed, options)) continue;
      const share = fed > 0 ? count / fed : 0;
      const order = kindOrder[component.split(':')[0]!] ?? 9;
      if (!best || count > best.count || (count === best.count && (share > best.share || (share === best.share && (order < best.order || (order === best.order && component < best.watch.component)))))) {
        best = { watch, count, share, order };
      }
    }
    if (!best) continue;
    const target = best.watch;
    if (target.rootAlarmId) {
      target.rootNodes.push(node);
      decisions.push({ kind: 'fold', rootAlarmId: target.rootAlarmId, component: target.component, node });
      continue;
    }
    const rootAlarmId = rootAlarmIdFor(target.component);
    const inWindow = new Set(target.recentDark.map((n) => n.nodeId));
    const nodes: DarkNode[] = [];
    for (const other of watches.values()) {
      if (other === target || !other.rootAlarmId || other.rootNodes.length === 0) continue;
      if (!other.rootNodes.every((n) => inWindow.has(n.nodeId))) continue;
      decisions.push({ kind: 'supersede', rootAlarmId: other.rootAlarmId, component: other.component, byRootAlarmId: rootAlarmId, byComponent: target.component, at: node.at });
      nodes.push(...other.rootNodes);
      other.rootAlarmId = null;
      other.rootNodes = [];
      other.rootOpenedAt = null;
    }
    const moved = new Set(nodes.map((n) => n.nodeId));
    for (const candidate of target.recentDark) {
      if (moved.has(candidate.nodeId) || rootOf(watches, candidate.nodeId)) continue;
      nodes.push(candidate);
    }
    target.rootAlarmId = rootAlarmId;
    target.rootNodes = nodes;
    target.rootOpenedAt = node.at;
    decisions.push({ kind: 'raise', rootAlarmId, component: target.component, nodes, fedNodes: fedNodes(target.component), at: node.at });
  }
  return decisions;
}

/** A node is back (or no longer watched): it leaves every root cause; a root cause with no dark node left closes. */
export function onNodeBack(watches: Map<string, ComponentWatch>, nodeId: string): Array<{ rootAlarmId: string; component: string; remaining: DarkNode[] }> {
  const changed: Array<{ rootAlarmId: string; component: string; remaining: DarkNode[] }> = [];
  for (const watch of watches.values()) {
    watch.recentDark = watch.recentDark.some((n) => n.nodeId === nodeId) ? watch.recentDark.filter((n) => n.nodeId !== nodeId) : watch.recentDark;
    if (!watch.rootAlarmId || !watch.rootNodes.some((n) => n.nodeId === nodeId)) continue;
    watch.rootNodes = watch.rootNodes.filter((n) => n.nodeId !== nodeId);
    changed.push({ rootAlarmId: watch.rootAlarmId, component: watch.component, remaining: watch.rootNodes });
    if (watch.rootNodes.length === 0) {
      watch.rootAlarmId = null;
      watch.rootOpenedAt = null;
    }
  }
  return changed;
}
