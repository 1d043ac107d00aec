import { describe, expect, it } from 'vitest';
import { correlateDark, type ComponentWatch } from '../../projections/index.js';
import { polls, type Outcome } from './support/fleet-events.js';

/** Rack r<k> holds nodes <prefix>-r<k>-n1..n4. */
const nodesOf = (prefix: string, rack: string): string[] => [1, 2, 3, 4].map((n) => `${prefix}-${rack}-n${n}`);

/** Polls every node once a minute from `fromMinute` for `minutes`, failing those `failing(node, minute)` says. */
function minutes(nodes: string[], fromMinute: number, count: number, failing: (node: string, minute: number) => boolean): ReturnType<typeof polls>[] {
  return Array.from({ length: count }, (_, k) => {
    const minute = fromMinute + k;
    return polls(minute * 60, nodes.map((node) => [node, (failing(node, minute) ? 'timeout' : 'success') as Outcome] as const));
  });
}

describe('blast radius correlation', () => {
  it('nodes of one rack alone point at nothing wider than what they share', () => {
    const watches = new Map<string, ComponentWatch>();
    const dark = (nodeId: string, at: number) => ({ node: { nodeId, at, lastContactAt: null, alarmId: `dark:${nodeId}` }, components: ['pdu:P1', 'tor:T1'] });
    const fed = (component: string): number => (component === 'pdu:P1' ? 8 : 4);
    const decisions = correlateDark(watches, [dark('a', 0), dark('b', 1000), dark('c', 2000)], fed, (c) => `root:${c}`);
    // Three of the four nodes of T1 (75%) beat three of the eight of P1 (37.5%).
    expect(decisions.filter((d) => d.kind === 'raise').map((d) => d.component)).toEqual(['tor:T1']);
  });

  it('a root cause on a ToR is superseded by the PDU once the PDU explains all its nodes', () => {
    const watches = new Map<string, ComponentWatch>();
    const fed = (component: string): number => (component === 'pdu:P1' ? 8 : 4);
    const inRack = (rack: string) => (nodeId: string, at: number) => ({ node: { nodeId, at, lastContactAt: null, alarmId: `dark:${nodeId}` }, components: ['pdu:P1', `tor:${rack}`] });
    correlateDark(watches, [inRack('T1')('a', 0), inRack('T1')('b', 0), inRack('T1')('c', 0)], fed, (c) => `root:${c}`);
    const later = correlateDark(watches, [inRack('T2')('e', 5000), inRack('T2')('f', 6000)], fed, (c) => `root:${c}`);
    expect(later.map((d) => d.kind)).toEqual(['supersede', 'raise']);
    expect(watches.get('pdu:P1')!.rootNodes.map((n) => n.nodeId).sort()).toEqual(['a', 'b', 'c', 'e', 'f']);
  });
});
