/**
 * The fleet simulator: builds the BMCs of a scenario from shared captures, serves each over real HTTP on
 * loopback, and exposes the control API (`/sim/stats`, `/sim/fleet`, `/sim/faults`, `/sim/firmware`).
 */
import { captureFirmwareState, restoreFirmwareState, type SimFirmwareState } from './firmware-state.ts';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { chooseAddressing, loopbackAddress, type Addressing, type AddressingChoice } from './addressing.ts';
import { DEFAULT_BEHAVIOUR, type SimBehaviour } from './behaviour.ts';
import type { Capture } from './capture.ts';
import { mockupFoldersIn, profileNames, resolveCaptureOrigin, type CaptureOrigin } from './capture-source.ts';
import { scaledClock, type SimClock } from './clock.ts';
import { handleControlRequest } from './control-api.ts';
import { SimError, controlStatus, type SimErrorCode } from './errors.ts';
import { FaultEngine, type ActiveFault } from './fault-engine.ts';
import { parseFaultSpec, type FaultSpecInput } from './fault-spec.ts';
import { planFleet } from './fleet-plan.ts';
import { fnv1a, seededRandom } from './random.ts';
import { answerBmcRequest, type ServiceContext } from './redfish-service.ts';
import { newUpdateStats, type UpdateContext, type UpdateStats } from './firmware-updates.ts';
import { parseScenario, type Scenario } from './scenario.ts';
import { SimBmc } from './sim-bmc.ts';
import { BmcEvents } from './events/bmc-events.ts';
import { bmcStats, fleetStats, type BmcStats, type FleetStats } from './stats.ts';
import type { BmcTlsCounters, SimTlsOptions } from './tls/bmc-tls-endpoint.ts';
import { TlsListener } from './tls/tls-listener.ts';
import { familyOf, profileFor, type FirmwareRevision, type VendorFamily, type VendorProfile } from './vendor-profile.ts';

export interface SimulatorOptions {
  /** A validated scenario (`loadScenario` or `parseScenario`); without one, `bmcs` and `mockups` describe the fleet. */
  scenario?: Scenario;
  /** Fleet size when there is no scenario (default 10). */
  bmcs?: number;
  /**
   * Vendor profile names (`dell`, `hpe`, ...; default: every profile), or with `captures` the names of capture
   * folders in it (default: all of them), or paths to Mockup-Creator folders; mixed evenly.
   */
  mockups?: string[];
  /** A folder of real Mockup-Creator captures (or one capture): mix names resolve to its sub-folders. */
  captures?: string;
  /** Port for every BMC and the control API; 0 picks a free one (default: the scenario's, else 0). */
  port?: number;
  addressing?: AddressingChoice;
  /** The clock; defaults to one running `clockFactor` times faster than the wall clock. */
  clock?: SimClock;
  clockFactor?: number;
  seed?: number;
  behaviour?: Partial<SimBehaviour>;
  /**
   * Serve every BMC over HTTPS, as real BMCs do (each with its own self-signed certificate, the TLS versions, ciphers,
   * handshake time, session resumption and keep-alive of its generation): `true`, or how. Needs an address per BMC
   * (per-address or wildcard addressing). The control API stays plain HTTP. Default: plain HTTP.
   */
  tls?: boolean | SimTlsOptions;
}

/** One BMC as the poller and the EBOM generator see it. Credentials are simulator-only fakes. */
export interface SimBmcInfo {
  id: string;
  baseUrl: string;
  username: string;
  password: string;
  vendor: VendorFamily;
  fixture: string;
  model: string | undefined;
  firmware: string;
  firmwareStale: boolean;
  /** False for the units nobody has a record of: leave them out of the EBOM. */
  recorded: boolean;
  sessionLimit: number;
  site: string;
  rack: string;
  pdu: string;
  tor: string;
  cdu: string;
}

export interface FirmwareCatalogueEntry {
  fixture: string;
  vendor: VendorFamily;
  revisions: Array<FirmwareRevision & { imageUri: string }>;
}

export interface CaptureSummary {
  fixture: string;
  /** `profile`: generated from our vendor profile; `capture`: a real Mockup-Creator folder. */
  source: 'profile' | 'capture';
  resources: number;
  /** Bytes of the shared compact JSON bodies. */
  bytes: number;
  bmcs: number;
}

export interface Simulator {
  controlUrl: string;
  addressing: Addressing;
  clock: SimClock;
  /** The fleet as started (credentials as they were at start). */
  bmcs: SimBmcInfo[];
  /** The fleet now (current credentials and firmware). */
  fleet(): SimBmcInfo[];
  stats(): FleetStats;
  bmcStats(id: string): BmcStats | undefined;
  injectFault(spec: FaultSpecInput | (Omit<FaultSpecInput, 'fault'> & { kind: FaultSpecInput['fault'] })): ActiveFault;
  clearFault(id: string): boolean;
  faults(): ActiveFault[];
  firmwareCatalogue(): FirmwareCatalogueEntry[];
  /** Firmware updates as the BMCs saw them: duplicates per intent key, the most BMCs updating at once. */
  updateStats(): UpdateStats;
  /** The capture trees loaded, each shared by all the BMCs built from it. */
  captures(): CaptureSummary[];
  /** What the BMCs' TLS side saw (handshakes, resumptions, connections, credentials received), per BMC or summed; undefined without TLS. */
  tlsStats(id?: string): BmcTlsCounters | undefined;
  /** The certificate a BMC serves now, in PEM (undefined without TLS). */
  certificatePem(id: string): string | undefined;
  /** Each BMC's installed firmware and update tasks: what a restarted demo gives back (`firmware-state.ts`). */
  firmwareState(): SimFirmwareState;
  /** Takes back a saved `firmwareState()`; returns how many BMCs took theirs. Throws SIM_STATE_INVALID on a bad one. */
  restoreFirmwareState(state: unknown): number;
  close(): Promise<void>;
}

function scenarioOf(options: SimulatorOptions): Scenario {
  if (options.scenario) return options.scenario;
  const defaults = options.captures ? mockupFoldersIn(options.captures).map((folder) => folder.name) : profileNames();
  if (defaults.length === 0) throw new SimError('SIM_MOCKUP_INVALID', `${options.captures} holds no Mockup-Creator folder (no redfish/v1/index.json)`, { dir: options.captures });
  const mockups = options.mockups?.length ? options.mockups : defaults;
  return parseScenario({
    name: 'ad-hoc',
    fleet: { bmcs: options.bmcs ?? 10, mix: mockups.map((fixture) => ({ fixture, share: 1 })) },
  });
}

/** The fleet's behaviour: the defaults, then the scenario's, then the caller's. */
function behaviourOf(scenario: Scenario, options: SimulatorOptions): SimBehaviour {
  const fromScenario = scenario.behaviour;
  return {
    ...DEFAULT_BEHAVIOUR,
    ...definedOnly({
      overloadAfterMs: fromScenario.overloadAfter,
      resetDarkMs: fromScenario.resetDark,
      sessionIdleTimeoutMs: fromScenario.sessionIdleTimeout,
      lockoutThreshold: fromScenario.lockoutThreshold,
      lockoutMs: fromScenario.lockoutDuration,
      firmwareUpdateMs: fromScenario.firmwareUpdateDuration,
      firmwareFailureRate: fromScenario.firmwareFailureRate,
      imageFailureRates: fromScenario.imageFailureRates,
      darkMode: fromScenario.darkMode,
      latencyScale: fromScenario.latencyScale,
    }),
    ...definedOnly(options.behaviour ?? {}),
  };
}

/** The simulated BMCs the scenario plans, each from its profile or capture, and how they are addressed. */
function fleetOf(scenario: Scenario, options: SimulatorOptions, seed: number): { origins: Map<string, CaptureOrigin>; profiles: VendorProfile[]; bmcs: SimBmc[]; addressing: Addressing } {
  // One tree per profile or capture folder, generated or parsed once and shared by every BMC (and every mix
  // entry) built from it.
  const origins = new Map<string, CaptureOrigin>();
  const originOf = (fixture: string): CaptureOrigin => {
    let origin = origins.get(fixture);
    if (!origin) {
      origin = resolveCaptureOrigin(fixture, options.captures);
      origins.set(fixture, origin);
    }
    return origin;
  };
  const mixOrigins = scenario.fleet.mix.map((entry) => originOf(entry.fixture));
  const mixCaptures = mixOrigins.map((origin) => origin.capture);
  const profiles: VendorProfile[] = scenario.fleet.mix.map((entry, i) =>
    profileFor(
      mixCaptures[i] as Capture,
      mixOrigins[i]?.profile,
      definedOnly({
        sessionLimit: entry.sessionLimit,
        firmwareMix: entry.firmware,
        slowResources: entry.slowResources?.map((slow) => ({ pattern: slow.pattern, latencyMs: slow.latency })),
        serving: entry.serving,
      }),
    ),
  );
  const plan = planFleet(scenario, profiles.map((profile) => profile.firmwareMix));
  const chosen = chooseAddressing(options.addressing ?? scenario.addressing, plan.bmcs.length);
  // HTTPS serves a certificate per BMC, so each needs its own address: past the descriptor limit, wildcard.
  const addressing = options.tls && chosen === 'path-prefix' && (options.addressing ?? scenario.addressing) === 'auto' ? 'wildcard' : chosen;

  const bmcs: SimBmc[] = plan.bmcs.map((planned) => {
    const capture = mixCaptures[planned.fixture] as Capture;
    const profile = profiles[planned.fixture] as VendorProfile;
    return new SimBmc({
      id: planned.id,
      index: planned.index,
      capture,
      profile,
      placement: planned.placement,
      username: defaultUser(profile.family),
      password: `sim-${fnv1a(`${seed}:password:${planned.index}`).toString(36)}`,
      firmware: planned.firmware?.version ?? capture.firmwareVersion ?? 'unknown',
      firmwareStale: planned.firmware?.stale ?? false,
      recorded: planned.recorded,
      address: addressing === 'path-prefix' ? undefined : loopbackAddress(planned.index),
    });
  });
  return { origins, profiles, bmcs, addressing };
}

/** The scenario's faults on their schedule, and its random faults at exponential gaps; `fired` counts each. */
function scheduleFaults(scenario: Scenario, clock: SimClock, faults: FaultEngine, seed: number, fired: () => void): Array<{ cancel(): void }> {
  const timers: Array<{ cancel(): void }> = [];
  for (const event of scenario.events) {
    const { at, ...spec } = event;
    faults.resolve(spec.target); // a scenario naming a rack or PDU that does not exist fails at start, not at 120 s
    timers.push(
      clock.schedule(at, () => {
        fired();
        faults.inject(spec);
      }),
    );
  }

  // Random faults: exponential gaps (a Poisson process), each occurrence on one BMC drawn from the target.
  const chaos = seededRandom(seed ^ 0xc4a05);
  scenario.randomFaults.forEach((random) => {
    const { every, target, ...spec } = random;
    const candidates = faults.resolve(target ?? { all: true });
    const slot = timers.length;
    const next = (): void => {
      const gap = -Math.log(1 - chaos()) * every;
      // One pending timer per random fault, replaced at each occurrence.
      timers[slot] = clock.schedule(gap, () => {
        const victim = candidates[Math.floor(chaos() * candidates.length)];
        if (victim) {
          fired();
          faults.inject({ ...spec, target: { bmc: [victim.id] } });
        }
        next();
      });
    };
    next();
  });
  return timers;
}

/**
 * Listens where the BMCs are addressed (one wildcard listener, or the control port and one listener per BMC address),
 * plus the port BMCs whose service moved answer on; every connection goes to `adopt`. On failure nothing is left open.
 */
async function openListeners(bmcs: readonly SimBmc[], addressing: Addressing, requestedPort: number, adopt: (socket: Socket) => void, service: ServiceContext): Promise<{ port: number; listeners: NetServer[] }> {
  const listeners: NetServer[] = [];
  const listen = (host: string, port: number, filter?: (socket: Socket) => boolean): Promise<NetServer> =>
    new Promise((resolve, reject) => {
      const server = createNetServer((socket) => (filter && !filter(socket) ? socket.destroy() : adopt(socket)));
      server.once('error', reject);
      server.listen({ host, port, backlog: 511 }, () => {
        server.off('error', reject);
        listeners.push(server);
        resolve(server);
      });
    });

  let port: number;
  try {
    if (addressing === 'wildcard') {
      const server = await listen('0.0.0.0', requestedPort, (socket) => (socket.remoteAddress ?? '').replace(/^::ffff:/, '').startsWith('127.'));
      port = (server.address() as { port: number }).port;
    } else {
      const control = await listen('127.0.0.1', requestedPort);
      port = (control.address() as { port: number }).port;
      if (addressing === 'per-address') {
        // In batches, so 20,000 listens do not all wait on the event loop at once.
        for (let at = 0; at < bmcs.length; at += 512) {
          await Promise.all(bmcs.slice(at, at + 512).map((bmc) => listen(bmc.address as string, port)));
        }
      }
    }
    // BMCs whose service moved to another port (`serving: { redirect: other-port }`) answer there too: one more port
    // on the same addresses, picked free, the same for all of them.
    const moved = bmcs.filter((bmc) => bmc.profile.serving?.redirect === 'other-port');
    if (moved.length > 0) {
      if (addressing === 'wildcard') {
        const server = await listen('0.0.0.0', 0, (socket) => (socket.remoteAddress ?? '').replace(/^::ffff:/, '').startsWith('127.'));
        service.alternatePort = (server.address() as { port: number }).port;
      } else if (addressing === 'path-prefix') {
        service.alternatePort = ((await listen('127.0.0.1', 0)).address() as { port: number }).port;
      } else {
        const first = await listen(moved[0]!.address as string, 0);
        const alternatePort = (first.address() as { port: number }).port;
        service.alternatePort = alternatePort;
        await Promise.all(moved.slice(1).map((bmc) => listen(bmc.address as string, alternatePort)));
      }
    }
  } catch (error) {
    await Promise.all(listeners.map((server) => new Promise((resolve) => server.close(resolve))));
    throw new SimError('SIM_ADDRESSING_UNAVAILABLE', `cannot listen for ${addressing} addressing on port ${requestedPort}: ${(error as Error).message}`, {
      addressing,
      port: requestedPort,
    });
  }
  return { port, listeners };
}

/** Starts the simulator; resolves once every BMC is listening. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const scenario = scenarioOf(options);
  const seed = options.seed ?? scenario.seed;
  const clock = options.clock ?? scaledClock(options.clockFactor ?? scenario.clockFactor);
  const behaviour = behaviourOf(scenario, options);

  const { origins, profiles, bmcs, addressing } = fleetOf(scenario, options, seed);
  const byAddress = new Map<string, SimBmc>();
  const byId = new Map<string, SimBmc>();
  for (const bmc of bmcs) {
    byId.set(bmc.id, bmc);
    if (bmc.address) byAddress.set(bmc.address, bmc);
  }

  for (const bmc of bmcs) {
    const spec = bmc.profile.eventService;
    if (spec) bmc.events = new BmcEvents(spec, clock, behaviour.eventHeartbeatMs, () => bmc.isDark(clock.now()));
  }
  const random = seededRandom(seed ^ 0x5eed);
  const updates: UpdateContext = { clock, behaviour, random, seed, stats: newUpdateStats(), keys: new Map(), inFlight: new Set() };
  const service: ServiceContext = { clock, behaviour, seed, random, updates };
  const tlsOptions: SimTlsOptions | undefined = options.tls === true ? {} : options.tls === false ? undefined : options.tls;
  if (tlsOptions && addressing === 'path-prefix') {
    throw new SimError('SIM_ADDRESSING_UNAVAILABLE', 'HTTPS needs an address per BMC (a certificate per BMC): use per-address or wildcard addressing, not path-prefix', { addressing });
  }
  // Set once `dispatch` exists; a BMC's TLS side hands its requests to it.
  let tls: TlsListener | undefined;
  const faults = new FaultEngine({ clock, behaviour, bmcs, seed, onCertificateReplaced: (bmc) => tls?.endpoint(bmc.id)?.replaceCertificate() });
  let eventsFired = 0;

  const dispatch = (request: IncomingMessage, response: ServerResponse): void => {
    const url = request.url ?? '/';
    const bmc = byAddress.get(request.socket.localAddress ?? '');
    if (bmc) return void answerBmcRequest(service, bmc, request, response, url).catch((error: unknown) => fail(response, error));
    const prefixed = /^\/bmc\/([^/?]+)(.*)$/.exec(url);
    if (prefixed) {
      const target = byId.get(prefixed[1] ?? '');
      if (target) return void answerBmcRequest(service, target, request, response, prefixed[2] || '/').catch((error: unknown) => fail(response, error));
    }
    void handleControlRequest(simulator, request, response).catch((error: unknown) => fail(response, error));
  };

  const http = createHttpServer({ keepAliveTimeout: 5_000, requestTimeout: 0 }, dispatch);
  if (tlsOptions) tls = new TlsListener(bmcs, tlsOptions, () => behaviour.latencyScale, dispatch);
  const sockets = new Set<Socket>();
  const adopt = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    if (tls?.adopt(socket)) return;
    http.emit('connection', socket);
  };
  const requestedPort = options.port ?? scenario.port ?? 0;
  const { port, listeners } = await openListeners(bmcs, addressing, requestedPort, adopt, service);

  const controlUrl = `http://127.0.0.1:${port}`;
  for (const bmc of bmcs) {
    if (addressing === 'path-prefix') {
      bmc.linkPrefix = `/bmc/${bmc.id}`;
      bmc.baseUrl = `${controlUrl}${bmc.linkPrefix}`;
    } else {
      bmc.baseUrl = `${tls ? 'https' : 'http'}://${bmc.address}:${port}`;
    }
  }

  const info = (bmc: SimBmc): SimBmcInfo => ({
    id: bmc.id,
    baseUrl: bmc.baseUrl,
    username: bmc.username,
    password: bmc.password,
    vendor: familyOf(bmc.capture),
    fixture: bmc.capture.name,
    model: bmc.capture.product,
    firmware: bmc.firmware,
    firmwareStale: bmc.firmwareStale,
    recorded: bmc.recorded,
    sessionLimit: bmc.profile.sessionLimit,
    ...bmc.placement,
  });

  const timers = scheduleFaults(scenario, clock, faults, seed, () => eventsFired++);

  let closed = false;
  const simulator: Simulator = {
    controlUrl,
    addressing,
    clock,
    bmcs: bmcs.map(info),
    fleet: () => bmcs.map(info),
    stats: () => fleetStats(bmcs, clock.now(), behaviour, faults.list().length, eventsFired),
    bmcStats: (id) => {
      const bmc = byId.get(id);
      return bmc ? bmcStats(bmc, clock.now(), behaviour) : undefined;
    },
    injectFault: (input) => {
      const { kind, ...rest } = input as { kind?: unknown } & Record<string, unknown>;
      return faults.inject(parseFaultSpec(kind !== undefined && rest['fault'] === undefined ? { ...rest, fault: kind } : input));
    },
    clearFault: (id) => faults.clear(id),
    updateStats: () => ({ ...updates.stats }),
    firmwareState: () => captureFirmwareState(bmcs),
    restoreFirmwareState: (state) => restoreFirmwareState(updates, byId, state),
    faults: () => faults.list(),
    firmwareCatalogue: () =>
      scenario.fleet.mix.map((entry, i) => ({
        fixture: entry.fixture,
        vendor: (profiles[i] as VendorProfile).family,
        revisions: (profiles[i] as VendorProfile).firmwareMix.map((revision) => ({
          ...revision,
          imageUri: `${controlUrl}/sim/images/${encodeURIComponent(entry.fixture)}/${revision.version}.bin`,
        })),
      })),
    captures: () =>
      [...origins.values()].map(({ capture, profile }) => ({
        fixture: capture.name,
        source: profile && capture.dir.startsWith('profile:') ? ('profile' as const) : ('capture' as const),
        resources: capture.resources.size,
        bytes: capture.bytes,
        bmcs: bmcs.filter((bmc) => bmc.capture === capture).length,
      })),
    tlsStats: (id) => tls?.counters(id),
    certificatePem: (id) => tls?.endpoint(id)?.certificate.pem,
    close: async () => {
      if (closed) return;
      closed = true;
      for (const timer of timers) timer.cancel();
      faults.clearAll();
      // A net.Server reports closed only once its connections are gone, so drop them first.
      const closing = Promise.all(listeners.map((server) => new Promise((resolve) => server.close(resolve))));
      for (const socket of sockets) socket.destroy();
      for (const bmc of bmcs) {
        bmc.held?.clear();
        bmc.events?.close();
      }
      await closing;
      http.close();
      tls?.close();
    },
  };
  return simulator;
}

function defaultUser(family: VendorFamily): string {
  switch (family) {
    case 'hpe':
      return 'Administrator';
    case 'supermicro':
      return 'ADMIN';
    case 'dell':
    case 'openbmc':
    case 'unknown':
      return 'root';
    default: {
      const unreachable: never = family;
      return unreachable;
    }
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}

function fail(response: ServerResponse, error: unknown): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  const code: SimErrorCode = 'SIM_INTERNAL';
  response.writeHead(controlStatus(code), { 'Content-Type': 'application/json' }).end(JSON.stringify({ code, message }));
}
