/**
 * `fleet-ledger replay diff` for people: transitions of meaning come first, and the first reads of firmware (a node's
 * first inventory, which a window over a fleet's first hour holds thousands of) are one line of counts unless asked.
 * The shape of the report that buried 92 went-dark transitions under 5,864 first reads.
 */
import { describe, expect, it } from 'vitest';
import type { FleetDiff } from '../../replay/history/index.js';
import { formatDiff } from '../../src/cli/replay-history.js';

const at = (second: number): string => new Date(Date.parse('2026-12-01T03:00:00Z') + second * 1000).toISOString();
const components = ['BMC', 'BIOS', 'NIC'];

function diffOf(options: { wentDark: number; firstReads: number; changes: number }): FleetDiff {
  const wentDark = Array.from({ length: options.wentDark }, (_, i) => ({
    nodeId: `bmc-${String(i).padStart(5, '0')}`,
    site: 'ams1',
    rack: 'ams1-r003',
    lastContactAt: at(60),
    darkAt: at(120),
    darkPosition: 1000 + i,
    endedAt: null,
    endPosition: null,
    endedBy: null,
    stillDark: true,
    durationMs: 600_000,
  }));
  const firmware = (i: number, from: string | null) => ({ nodeId: `bmc-${String(i).padStart(5, '0')}`, component: components[i % 3]!, from, to: '9.90.2', fromNormalized: from, toNormalized: '9.90.2', position: 10 + i, observedAt: at(i % 600) });
  const firmwareChanged = [...Array.from({ length: options.firstReads }, (_, i) => firmware(i, null)), ...Array.from({ length: options.changes }, (_, i) => firmware(i, '9.80.0'))];
  const zero = { joined: 0, left: 0, moved: 0, recovered: 0, darkCleared: 0, driftOpened: 0, driftClosed: 0, alarmsOpened: 0, alarmsClosed: 0, alarmsAcknowledged: 0, stepsStarted: 0, stepsSucceeded: 0, stepsFailed: 0, stepsHeld: 0, stepsQuarantined: 0, stepOperatorActions: 0, rolloutMilestones: 0, provisioning: 0, intents: 0 };
  return {
    window: { from: { position: 1, at: at(0) }, to: { position: 9000, at: at(3600) } },
    events: 8999,
    counts: { ...zero, firmwareChanged: firmwareChanged.length, firmwareFirstReads: options.firstReads, wentDark: options.wentDark, stillDark: options.wentDark },
    joined: [],
    left: [],
    moved: [],
    firmwareChanged,
    wentDark,
    recovered: [],
    darkCleared: [],
    driftOpened: [],
    driftClosed: [],
    alarmsOpened: [],
    alarmsClosed: [],
    alarmsAcknowledged: [],
    alarmSource: { available: true, throughPosition: 9000, complete: true },
    rolloutSteps: [],
    rolloutMilestones: [],
    provisioning: [],
    intents: [],
    truncated: [],
  } as FleetDiff;
}

describe('replay diff, printed', () => {
  it('replay diff puts the went-dark transitions first and counts the first reads of firmware in one line unless asked for', () => {
    const text = formatDiff(diffOf({ wentDark: 92, firstReads: 5864, changes: 3 }));
    const lines = text.split('\n');
    // Given 92 nodes gone dark and 5,864 first reads: the report is about the 92, and short.
    expect(lines.length).toBeLessThan(92 + 40);
    const darkHeading = lines.indexOf('went dark (92):');
    expect(darkHeading).toBeGreaterThan(0);
    expect(darkHeading).toBeLessThan(5);
    expect(lines.filter((line) => /^  bmc-\d+  dark .* still dark at the end/.test(line))).toHaveLength(92);
    // The three real changes of version are listed; no first read is.
    expect(lines.filter((line) => line.includes('(absent) →'))).toEqual([]);
    expect(text).toContain('firmware changed (3):');
    expect(lines.indexOf('firmware changed (3):')).toBeGreaterThan(darkHeading);
    const firstReads = lines.filter((line) => line.startsWith('first reads of firmware'));
    expect(firstReads).toEqual(['first reads of firmware (no version before the window, not changes): 5864: BIOS 1955, BMC 1955, NIC 1954; --first-reads lists them']);
    expect(lines[1]).toContain('92 went dark');
    expect(lines[1]).toContain('3 firmware changes');
    expect(lines[1]).toContain('5864 first reads of firmware');
  });

  it('replay diff --first-reads lists every first read, after the transitions', () => {
    const text = formatDiff(diffOf({ wentDark: 2, firstReads: 30, changes: 0 }), { firstReads: true });
    const lines = text.split('\n');
    expect(lines.filter((line) => line.includes('(absent) → 9.90.2'))).toHaveLength(30);
    expect(lines.indexOf('first reads of firmware (no version before the window) (30):')).toBeGreaterThan(lines.indexOf('went dark (2):'));
    expect(text).not.toContain('firmware changed');
  });
});
