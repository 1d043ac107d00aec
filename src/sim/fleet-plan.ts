/**
 * The fleet plan: which BMC is built from which capture, with which firmware, in which rack fed by which PDU, ToR
 * switch and CDU. A pure function of the scenario and its seed, so a scenario always builds the same fleet.
 */
import type { Scenario } from './scenario.ts';
import type { Placement } from './sim-bmc.ts';
import { pickWeighted, seededRandom } from './random.ts';
import type { FirmwareRevision } from './vendor-profile.ts';

export interface PlannedBmc {
  id: string;
  index: number;
  /** Index into `FleetPlan.fixtures`. */
  fixture: number;
  placement: Placement;
  /** The revision drawn from the fixture's mix (undefined only for an empty mix: the captured revision). */
  firmware: FirmwareRevision | undefined;
  recorded: boolean;
}

export interface PlannedFixture {
  fixture: string;
  sessionLimit: number | undefined;
  firmware: FirmwareRevision[] | undefined;
}

export interface FleetPlan {
  fixtures: PlannedFixture[];
  bmcs: PlannedBmc[];
}

/** Ids are zero-padded so they sort in fleet order: `bmc-00042`. */
export function bmcId(index: number): string {
  return `bmc-${String(index).padStart(5, '0')}`;
}

/** Racks of the scenario in order, each shared by its nodes. */
export function planRacks(scenario: Scenario, total: number): Array<{ placement: Placement; nodes: number }> {
  const pad = (n: number): string => String(n).padStart(3, '0');
  const sites = scenario.sites ?? [{ id: 'site-1', racks: Math.ceil(total / 32), nodesPerRack: 32, racksPerPdu: 1, racksPerTor: 1, racksPerCdu: 4 }];
  const racks: Array<{ placement: Placement; nodes: number }> = [];
  for (const site of sites) {
    if (typeof site.racks !== 'number') {
      for (const rack of site.racks) racks.push({ placement: { site: site.id, rack: rack.id, pdu: rack.pdu, tor: rack.tor, cdu: rack.cdu }, nodes: rack.nodes });
      continue;
    }
    for (let r = 0; r < site.racks; r++) {
      racks.push({
        placement: {
          site: site.id,
          rack: `${site.id}-r${pad(r + 1)}`,
          pdu: `${site.id}-p${pad(Math.floor(r / site.racksPerPdu) + 1)}`,
          tor: `${site.id}-tor${pad(Math.floor(r / site.racksPerTor) + 1)}`,
          cdu: `${site.id}-cdu${pad(Math.floor(r / site.racksPerCdu) + 1)}`,
        },
        nodes: site.nodesPerRack,
      });
    }
  }
  return racks;
}

/** Splits `total` between mix entries: fixed counts first, then shares by largest remainder. */
function vendorCounts(scenario: Scenario, total: number): number[] {
  const mix = scenario.fleet.mix;
  const fixed = mix.reduce((sum, entry) => sum + (entry.count ?? 0), 0);
  const rest = Math.max(0, total - fixed);
  const shares = mix.map((entry) => (entry.count === undefined ? (entry.share ?? 1) : 0));
  const shareTotal = shares.reduce((a, b) => a + b, 0);
  const exact = shares.map((share) => (shareTotal > 0 ? (share / shareTotal) * rest : 0));
  const counts = mix.map((entry, i) => entry.count ?? Math.floor(exact[i] ?? 0));
  let missing = total - counts.reduce((a, b) => a + b, 0);
  const order = exact.map((value, i) => ({ i, remainder: value - Math.floor(value) })).sort((a, b) => b.remainder - a.remainder);
  for (let k = 0; missing > 0 && order.length > 0; k++, missing--) {
    const at = order[k % order.length]?.i ?? 0;
    counts[at] = (counts[at] ?? 0) + 1;
  }
  return counts;
}

/**
 * Plans the fleet. Vendors fill the racks in mix order (racks of one model, as in real halls); firmware is drawn
 * per BMC from its fixture's mix; `fleet.unrecorded` units, drawn at random, get a stale revision.
 */
export function planFleet(scenario: Scenario, mixes: ReadonlyArray<FirmwareRevision[]>): FleetPlan {
  const random = seededRandom(scenario.seed);
  const racksFromSites = scenario.sites ? planRacks(scenario, 0) : undefined;
  const total = racksFromSites ? racksFromSites.reduce((sum, rack) => sum + rack.nodes, 0) : (scenario.fleet.bmcs ?? 0);
  const racks = racksFromSites ?? planRacks(scenario, total);
  const counts = vendorCounts(scenario, total);
  const fixtures: PlannedFixture[] = scenario.fleet.mix.map((entry) => ({ fixture: entry.fixture, sessionLimit: entry.sessionLimit, firmware: entry.firmware }));

  const unrecorded = new Set<number>();
  const wanted = Math.min(scenario.fleet.unrecorded, total);
  while (unrecorded.size < wanted) unrecorded.add(Math.floor(random() * total));

  const bmcs: PlannedBmc[] = [];
  let fixture = 0;
  let leftInFixture = counts[0] ?? 0;
  let rackAt = 0;
  let leftInRack = racks[0]?.nodes ?? 0;
  for (let index = 0; index < total; index++) {
    while (leftInFixture <= 0 && fixture < counts.length - 1) leftInFixture = counts[++fixture] ?? 0;
    while (leftInRack <= 0 && rackAt < racks.length - 1) leftInRack = racks[++rackAt]?.nodes ?? 0;
    const mix = mixes[fixture] ?? [];
    const recorded = !unrecorded.has(index);
    const stale = mix.filter((revision) => revision.stale);
    const firmware = !recorded && stale.length > 0 ? stale[Math.floor(random() * stale.length)] : mix[pickWeighted(mix.map((revision) => revision.share), random)];
    const rack = racks[rackAt] ?? { placement: { site: 'site-1', rack: 'rack-0', pdu: 'pdu-0', tor: 'tor-0', cdu: 'cdu-0' }, nodes: 1 };
    bmcs.push({ id: bmcId(index), index, fixture, placement: rack.placement, firmware, recorded });
    leftInFixture--;
    leftInRack--;
  }
  return { fixtures, bmcs };
}
