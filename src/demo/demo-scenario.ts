import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { parseScenario, type Scenario } from '../sim/index.js';

const demoFile = new URL('../../examples/scenario-demo.yaml', import.meta.url);

/**
 * The demo's fleet: `examples/scenario-demo.yaml` (every captured model, stale firmware on unrecorded
 * units, two sites, and a morning of trouble: a PDU fails at 60 s darkening two racks, three nodes flap
 * from 90 s, a ToR slows, a rack's password rotates, a CDU trips at 240 s), resized to about `bmcs` nodes
 * and run at wall-clock speed so the liveness rules play out as they would in production.
 */
export function demoScenario(bmcs: number): Scenario {
  const raw = parse(readFileSync(demoFile, 'utf8')) as { clockFactor?: number; sites: Array<{ racks: number; nodesPerRack: number }> };
  const perSite = Math.ceil(bmcs / raw.sites.length);
  for (const site of raw.sites) site.racks = Math.max(16, Math.ceil(perSite / site.nodesPerRack));
  raw.clockFactor = 1;
  return parseScenario(raw, 'the demo scenario');
}
