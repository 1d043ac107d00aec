import { createHash } from 'node:crypto';
import type { ProposedEvent } from '../../events/index.js';
import type { EventStore } from '../ledger/index.js';
import type { CredentialProvider } from '../poller/index.js';
import type { SimBmcInfo, Simulator } from '../sim/index.js';

const demoActor = { kind: 'operator', id: 'demo-setup', role: 'admin' } as const;

/** A deterministic event id, so registering the same fleet twice writes nothing the second time. */
function stableId(text: string): string {
  const hex = createHash('sha256').update(text).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Registers every simulated BMC as a node (and each rack's topology) through the same intents an
 * operator would issue. Nodes already registered at the same address are left alone.
 */
export async function registerSimulatedFleet(store: EventStore, bmcs: readonly SimBmcInfo[], expectedIntervalS: number): Promise<{ registered: number; racks: number }> {
  let registered = 0;
  await Promise.all(
    bmcs.map(async (bmc) => {
      const stream = `node-${bmc.id}`;
      const [last] = await store.readStream(stream, { direction: 'backward', limit: 50 }).then((events) => events.filter((e) => e.type === 'NodeRegistered'));
      if (last && (last.data as { bmc: { address: string } }).bmc.address === bmc.baseUrl) return;
      await store.append(stream, [
        {
          type: 'NodeRegistered',
          data: { nodeId: bmc.id, site: bmc.site, rack: bmc.rack, bmc: { protocol: 'redfish', address: bmc.baseUrl, credentialRef: `sim:${bmc.id}`, sessionLimit: bmc.sessionLimit }, expectedIntervalS },
          actor: demoActor,
        },
      ]);
      registered += 1;
    }),
  );
  const racks = new Map<string, SimBmcInfo>();
  for (const bmc of bmcs) racks.set(bmc.rack, bmc);
  await Promise.all(
    [...racks.values()].map((bmc) => {
      const event: ProposedEvent = {
        eventId: stableId(`topology:${bmc.site}:${bmc.rack}:${bmc.pdu}:${bmc.tor}:${bmc.cdu}`),
        type: 'TopologyDeclared',
        data: { site: bmc.site, rack: bmc.rack, pdu: [bmc.pdu], tor: [bmc.tor], cdu: bmc.cdu },
        actor: demoActor,
      };
      return store.append(`rack-${bmc.rack}`, [event]).catch(() => undefined);
    }),
  );
  return { registered, racks: racks.size };
}

/** The simulator's own fake credentials, looked up per visit (they rotate when a fault rotates them). */
export function simulatorCredentials(sim: Simulator): CredentialProvider {
  let fleet = new Map(sim.fleet().map((bmc) => [`sim:${bmc.id}`, bmc]));
  let refreshedAt = Date.now();
  return {
    get(ref) {
      if (Date.now() - refreshedAt > 5000) {
        fleet = new Map(sim.fleet().map((bmc) => [`sim:${bmc.id}`, bmc]));
        refreshedAt = Date.now();
      }
      const bmc = fleet.get(ref);
      // Bound to the BMC's own address: a node re-registered elsewhere is not sent the secret.
      return bmc ? { username: bmc.username, password: bmc.password, version: createHash('sha256').update(bmc.password).digest('hex').slice(0, 8), endpoints: [new URL(bmc.baseUrl).origin] } : undefined;
    },
  };
}
