import { createHash } from 'node:crypto';
import type { ProposedEvent } from '../../events/index.js';
import { nameUuid, type EventStore } from '../ledger/index.js';
import type { CredentialProvider } from '../poller/index.js';
import { SimError, startSimulator, type SimBmcInfo, type Simulator, type SimulatorOptions } from '../sim/index.js';
import { inBoundedParallel, withBoundedRetries, type RetryPolicy } from './bounded-retry.js';
import { DemoSetupError } from './demo-setup-error.js';
import { readRecordedFleet, recordedSimulatorPort, sameRegistration, simulatedCredentialPrefix, type NodeRegistration, type RecordedNode } from './recorded-fleet.js';

const demoActor = { kind: 'operator', id: 'demo-setup', role: 'admin' } as const;

/** A deterministic event id, so registering the same fleet twice writes nothing the second time. */
function stableId(text: string): string {
  const hex = createHash('sha256').update(text).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export interface FleetRegistration {
  /** Nodes whose registration was appended: new, moved, or back after a smaller fleet. */
  registered: number;
  /** Nodes already recorded exactly as simulated: nothing appended for them. */
  unchanged: number;
  /** Nodes the demo registered before that this fleet no longer simulates: decommissioned. */
  decommissioned: number;
  racks: number;
}

export interface RegisterOptions {
  /** What the log already says (read once by the caller, e.g. to pick the simulator's port); read here if absent. */
  recorded?: Map<string, RecordedNode>;
  retry?: RetryPolicy;
  /** Appends in flight at once: well under the store's pool, so none waits past its connect bound. */
  concurrency?: number;
}

/** The registration the demo records for a simulated BMC. */
export function simulatedRegistration(bmc: SimBmcInfo, expectedIntervalS: number): NodeRegistration {
  return {
    nodeId: bmc.id,
    site: bmc.site,
    rack: bmc.rack,
    bmc: { protocol: 'redfish', address: bmc.baseUrl, credentialRef: `${simulatedCredentialPrefix}${bmc.id}`, sessionLimit: bmc.sessionLimit },
    expectedIntervalS,
  };
}

/**
 * Makes the log's fleet the simulated one, through the same intents an operator would issue, appending only what
 * changed: a node recorded exactly as simulated gets nothing; a new or moved one a `NodeRegistered`; a node the demo
 * registered before (credential `sim:<id>`) that this fleet no longer simulates a `NodeDecommissioned`, so a restart
 * with fewer `--bmcs` leaves no node waiting forever for a BMC nobody serves (one that comes back with more `--bmcs`
 * is registered again). Nodes registered by anyone else are left alone. Every write has a deterministic id and is
 * retried within `retry` while the database is busy; a setup that cannot finish ends in a `DemoSetupError`.
 */
export async function registerSimulatedFleet(store: EventStore, bmcs: readonly SimBmcInfo[], expectedIntervalS: number, options: RegisterOptions = {}): Promise<FleetRegistration> {
  const recorded = options.recorded ?? (await readRecordedFleet(store, options.retry));
  const concurrency = options.concurrency ?? 16;
  let registered = 0;
  let unchanged = 0;
  await inBoundedParallel(bmcs, concurrency, async (bmc) => {
    const wanted = simulatedRegistration(bmc, expectedIntervalS);
    const now = recorded.get(bmc.id);
    if (now?.registration && sameRegistration(now.registration, wanted)) {
      unchanged += 1;
      return;
    }
    // Named after what it changes from, so a repeat after a lost answer is a replay, and a later change is new.
    const eventId = nameUuid(`demo-registration/${bmc.id}/after/${now?.position ?? 0}`);
    await withBoundedRetries(`registering simulated node ${bmc.id}`, () => store.append(`node-${bmc.id}`, [{ eventId, type: 'NodeRegistered', data: wanted, actor: demoActor }]), options.retry);
    registered += 1;
  });
  const simulated = new Set(bmcs.map((bmc) => bmc.id));
  const gone = [...recorded.entries()].filter(([nodeId, node]) => !simulated.has(nodeId) && node.registration?.bmc.credentialRef.startsWith(simulatedCredentialPrefix));
  await inBoundedParallel(gone, concurrency, async ([nodeId, node]) => {
    const eventId = nameUuid(`demo-decommission/${nodeId}/after/${node.position}`);
    const reason = `no longer simulated: this start of the demo simulates ${bmcs.length} BMCs`;
    await withBoundedRetries(`decommissioning node ${nodeId}`, () => store.append(`node-${nodeId}`, [{ eventId, type: 'NodeDecommissioned', data: { nodeId, reason }, actor: demoActor }]), options.retry);
  });
  const racks = new Map<string, SimBmcInfo>();
  for (const bmc of bmcs) racks.set(bmc.rack, bmc);
  await inBoundedParallel([...racks.values()], concurrency, async (bmc) => {
    const event: ProposedEvent = {
      eventId: stableId(`topology:${bmc.site}:${bmc.rack}:${bmc.pdu}:${bmc.tor}:${bmc.cdu}`),
      type: 'TopologyDeclared',
      data: { site: bmc.site, rack: bmc.rack, pdu: [bmc.pdu], tor: [bmc.tor], cdu: bmc.cdu },
      actor: demoActor,
    };
    // The same topology again is an idempotent replay; a rack whose topology an operator declared otherwise keeps it.
    await withBoundedRetries(`declaring rack ${bmc.rack}`, () => store.append(`rack-${bmc.rack}`, [event]), options.retry).catch((error: unknown) => {
      if (error instanceof DemoSetupError && error.code === 'DEMO_DATABASE_UNAVAILABLE') throw error;
    });
  });
  return { registered, unchanged, decommissioned: gone.length, racks: racks.size };
}

/**
 * Starts the simulator on the port the log's simulated fleet was registered at (when its scenario names none), so a
 * restart finds every BMC at its recorded address: nothing to re-register, no node left polled at an address
 * nobody serves. If that port is taken now, any free one: the fleet is then registered again at its new addresses.
 */
export async function startSimulatedFleet(options: SimulatorOptions, recorded: ReadonlyMap<string, RecordedNode>): Promise<Simulator> {
  const port = options.scenario?.port === undefined && options.port === undefined ? recordedSimulatorPort(recorded) : undefined;
  if (port === undefined) return startSimulator(options);
  try {
    return await startSimulator({ ...options, port });
  } catch (error) {
    if (error instanceof SimError && error.code === 'SIM_ADDRESSING_UNAVAILABLE') return startSimulator(options);
    throw error;
  }
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
