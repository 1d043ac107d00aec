import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { parseScenario, SimError, type Scenario } from '../sim/index.js';

const demoFile = new URL('../../examples/scenario-demo.yaml', import.meta.url);

/** The racks of every site the demo's script names (PDUs, ToRs, CDUs up to `fra2-cdu002` live in them). */
const MIN_RACKS_PER_SITE = 16;

interface RawSite {
  id: string;
  racks: number;
  nodesPerRack: number;
  racksPerPdu: number;
  racksPerTor: number;
  racksPerCdu: number;
}

interface RawEvent {
  target?: { bmc?: string | string[] };
}

/** The smallest fleet the demo runs: one node in each rack its script names. */
export function demoMinimumBmcs(): number {
  const raw = parse(readFileSync(demoFile, 'utf8')) as { sites: RawSite[] };
  return raw.sites.length * MIN_RACKS_PER_SITE;
}

/**
 * The demo's fleet: `examples/scenario-demo.yaml` (every simulated model, stale firmware on unrecorded units, two
 * sites, and a morning of trouble: a PDU fails at 60 s darkening two racks, three nodes flap from 90 s, a ToR
 * slows, a CDU trips at 240 s, a rack's password rotates at 270 s), with exactly `bmcs` nodes, run at wall-clock
 * speed so the liveness rules play out as they would in production.
 *
 * The nodes are split evenly between the sites; each site keeps at least the 16 racks the script names, racks
 * fill to 32 nodes, and a fleet that does not divide evenly has racks one node shorter than the others. Events
 * aimed at BMC numbers the fleet does not have are left out.
 */
export function demoScenario(bmcs: number): Scenario {
  const raw = parse(readFileSync(demoFile, 'utf8')) as { clockFactor?: number; sites: Array<RawSite | Record<string, unknown>>; events?: RawEvent[] };
  const minimum = demoMinimumBmcs();
  if (!Number.isInteger(bmcs) || bmcs < minimum) {
    throw new SimError('SIM_SCENARIO_INVALID', `--bmcs: the demo needs a whole number of at least ${minimum} BMCs (one in each rack its script names), not ${bmcs}`, {
      field: 'bmcs',
      minimum,
    });
  }
  const sites = raw.sites as RawSite[];
  raw.sites = sites.map((site, index) => {
    const nodes = Math.floor(bmcs / sites.length) + (index < bmcs % sites.length ? 1 : 0);
    const rackCount = Math.max(MIN_RACKS_PER_SITE, Math.ceil(nodes / site.nodesPerRack));
    const pad = (n: number): string => String(n).padStart(3, '0');
    const racks = Array.from({ length: rackCount }, (_, r) => ({
      id: `${site.id}-r${pad(r + 1)}`,
      nodes: Math.floor(nodes / rackCount) + (r < nodes % rackCount ? 1 : 0),
      pdu: `${site.id}-p${pad(Math.floor(r / site.racksPerPdu) + 1)}`,
      tor: `${site.id}-tor${pad(Math.floor(r / site.racksPerTor) + 1)}`,
      cdu: `${site.id}-cdu${pad(Math.floor(r / site.racksPerCdu) + 1)}`,
    }));
    return { id: site.id, racks };
  });
  const exists = (id: string): boolean => Number(/^bmc-(\d+)$/.exec(id)?.[1] ?? Number.NaN) < bmcs;
  raw.events = (raw.events ?? []).flatMap((event) => {
    const target = event.target?.bmc;
    if (target === undefined) return [event];
    const kept = (Array.isArray(target) ? target : [target]).filter(exists);
    return kept.length === 0 ? [] : [{ ...event, target: { ...event.target, bmc: kept } }];
  });
  raw.clockFactor = 1;
  return parseScenario(raw, 'the demo scenario');
}
