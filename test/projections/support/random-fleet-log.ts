/**
 * Random fleet histories for property tests: registrations, topology, poll rounds (contacts, misses, latches), EBOM
 * declarations, inventory and firmware observations, maintenance windows, decommissions, GPU faults and
 * acknowledgements, over six nodes in three racks.
 */
import fc from 'fast-check';
import type { ProposedEvent } from '../../../events/index.js';
import { acknowledged, declared, decommissioned, firmware, gpuTelemetry, inventory, maintenance, polls, registered, topology, xid, type Outcome } from './fleet-events.js';

const nodes = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'] as const;
const rackOf = (node: string): string => ({ p1: 'ra', p2: 'ra', p3: 'rb', p4: 'rb', p5: 'rc', p6: 'rc' })[node]!;
const node = fc.constantFrom(...nodes);
const outcome = fc.constantFrom<Outcome>('success', 'success', 'not-modified', 'timeout', 'timeout', 'refused', 'latched');

export type Command =
  | { k: 'register'; node: string }
  | { k: 'topology'; rack: 'ra' | 'rb' | 'rc' }
  | { k: 'polls'; rounds: number; outcomes: Array<[string, Outcome]> }
  | { k: 'declare'; node: string; bmc: string }
  | { k: 'inventory'; node: string; bmc: string; serial: string }
  | { k: 'firmware'; node: string; version: string }
  | { k: 'maintenance'; node: string }
  | { k: 'decommission'; node: string }
  | { k: 'xid'; node: string }
  | { k: 'telemetry'; node: string; uncorrected: number }
  | { k: 'ack'; alarm: string };

export const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ k: fc.constant('register' as const), node }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('topology' as const), rack: fc.constantFrom('ra' as const, 'rb' as const, 'rc' as const) }) },
  {
    weight: 8,
    arbitrary: fc.record({
      k: fc.constant('polls' as const),
      rounds: fc.integer({ min: 1, max: 6 }),
      outcomes: fc.uniqueArray(fc.tuple(node, outcome), { minLength: 1, maxLength: 6, selector: ([n]) => n }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('declare' as const), node, bmc: fc.constantFrom('iLO 5 v2.72', '2.78 Jan 10 2023') }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('inventory' as const), node, bmc: fc.constantFrom('iLO 5 v2.72', 'iLO 5 v2.78'), serial: fc.constantFrom('S', 'X') }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('firmware' as const), node, version: fc.constantFrom('2.72 Sep 04 2022', '2.78 Jan 10 2023') }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('maintenance' as const), node }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('decommission' as const), node }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('xid' as const), node }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('telemetry' as const), node, uncorrected: fc.constantFrom(0, 2) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('ack' as const), alarm: fc.constantFrom('drift:p1:1', 'nope') }) },
);

/** The commands as appends (stream, events), with poll times advancing a minute per round. */
export function toAppends(commands: Command[]): Array<[string, ProposedEvent[]]> {
  let minute = 0;
  return commands.map((c): [string, ProposedEvent[]] => {
    switch (c.k) {
      case 'register':
        return [`node-${c.node}`, [registered(c.node, rackOf(c.node))]];
      case 'topology':
        return [`rack-${c.rack}`, [topology(c.rack, [c.rack === 'rc' ? 'PB' : 'PA'], [`T-${c.rack}`])]];
      case 'polls':
        return ['polls-dc1', Array.from({ length: c.rounds }, () => polls((minute += 1) * 60, c.outcomes))];
      case 'declare':
        return [`node-${c.node}`, [declared({ nodeId: c.node, serial: 'S', firmwareBaseline: { BMC: c.bmc } })]];
      case 'inventory':
        return [`node-${c.node}`, [inventory({ manufacturer: 'HPE', model: 'ProLiant DL380 Gen10 Plus', serial: c.serial, bmcModel: 'iLO 5', bmcFirmware: c.bmc }, minute * 60)]];
      case 'firmware':
        return [`node-${c.node}`, [firmware([{ component: 'iLO 5', version: c.version }], { seconds: minute * 60 })]];
      case 'maintenance':
        return [`node-${c.node}`, [maintenance(c.node, minute * 60, minute * 60 + 300)]];
      case 'decommission':
        return [`node-${c.node}`, [decommissioned(c.node)]];
      case 'xid':
        return [`node-${c.node}`, [xid(79, 'critical', minute * 60)]];
      case 'telemetry':
        return [`node-${c.node}`, [gpuTelemetry(c.uncorrected, minute * 60)]];
      case 'ack':
        return ['operators', [acknowledged(c.alarm)]];
    }
  });
}

