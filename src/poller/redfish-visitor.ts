import type { DriverObservation, DriverObservationType } from '../../events/index.js';
import { DriverError, IpmiDriver, RedfishClient, RedfishDriver, SnmpDriver, type ReadValidators } from '../drivers/index.js';
import type { BmcTransports } from './bmc-transports.js';
import type { Credential, PollTarget, PollWork } from './poll-target.js';

/** What one visit to a BMC produced: one result per kind of work, and the observations read. */
export interface VisitResult {
  ok: boolean;
  latencyMs: number;
  observations: DriverObservation[];
  error?: unknown;
  /** The liveness check was answered 304 to its `If-None-Match`: a contact, recorded as `not-modified`. */
  notModified?: boolean;
  /** The ETag of what the liveness check read, to send next time. */
  etag?: string;
  /**
   * A conditional heavy read (`VisitOptions.validators`): every resource of it answered 304, so nothing was read and
   * nothing is observed (`notModified`), or it was read in full and these are its validators for next time.
   */
  validators?: ReadValidators;
  /** The resource whose answer showed a change (asked first at the next conditional read). */
  changedResource?: string;
  /** What kind of BMC answered (`VisitOptions.describe`): its service root's vendor, product and Redfish version. */
  model?: string;
}

/** Performs the requests of one visit. The poller guarantees one visit per BMC at a time. */
export interface Visitor {
  visit(target: PollTarget, credential: Credential, works: readonly PollWork[], options: VisitOptions): Promise<VisitResult>;
}

export interface VisitOptions {
  requestTimeoutMs: number;
  firmwareTimeoutMs: number;
  /** Everything a heavy visit does, all requests together (logout excepted): a slow BMC cannot hold a slot for hours. */
  visitDeadlineMs: number;
  sessionLimit: number;
  /** The ETag the last liveness check read: sent as `If-None-Match`, so an unchanged answer costs the BMC no body. */
  ifNoneMatch?: string;
  /**
   * Asked right before every request (cluster mode: the lease on the BMC's shard is still held): false sends nothing
   * more and ends the visit with `DRIVER_FENCED`, which the poller does not count as a miss.
   */
  guard?: () => boolean;
  /** Ends the visit at once (its shard is being handed over); a session open is logged out while the guard allows. */
  signal?: AbortSignal;
  /** Sent with every request (`x-fleet-ledger-poller`: which process polls). */
  headers?: Record<string, string>;
  /**
   * The validators of the last full inventory-and-firmware read: each resource is asked with `If-None-Match` first,
   * and the visit reads in full only when one of them changed. Undefined: a full read.
   */
  validators?: ReadValidators;
  /** Ask collections for their members expanded where the BMC announces `$expand` (default true). */
  expand?: boolean;
  /**
   * A liveness check also reads the service root, once the check is answered, and says what kind of BMC this is
   * (`VisitResult.model`). Asked at a BMC's first contact: the poller orders first reads by what it learns of each
   * kind's read time. The root failing costs the check nothing.
   */
  describe?: boolean;
  /**
   * A liveness check that logs in to nothing (the node is fenced by a credential rotation): one GET of the service
   * root, which Redfish serves without authentication. No credential is sent. Redfish only.
   */
  anonymous?: boolean;
}

/**
 * What kind of BMC a service root describes: vendor, product, Redfish version and the root's OEM namespaces (roots
 * that name no vendor or product still differ in those). Not an identity: BMCs of one model and firmware share it.
 */
export function modelOfRoot(root: unknown): string | undefined {
  if (root === null || typeof root !== 'object' || Array.isArray(root)) return undefined;
  const record = root as Record<string, unknown>;
  const text = (value: unknown): string => (typeof value === 'string' ? value.slice(0, 64) : '');
  const oem = record.Oem !== null && typeof record.Oem === 'object' && !Array.isArray(record.Oem) ? Object.keys(record.Oem).sort().slice(0, 8).join(',') : '';
  return [text(record.Vendor), text(record.Product), text(record.RedfishVersion), oem].join('|');
}

/** Works whose reads change only with the hardware or its firmware: read conditionally (`VisitOptions.validators`). */
export function conditionalWorks(works: readonly PollWork[]): boolean {
  return works.length > 0 && works.every((work) => work === 'inventory' || work === 'firmware');
}

function fenced(options: VisitOptions): boolean {
  return options.guard !== undefined && !options.guard();
}

function fencedError(target: PollTarget): DriverError {
  return new DriverError('DRIVER_FENCED', `visit to ${target.nodeId} not started: the lease on its shard is not held`);
}

function withSignal(deadline: AbortSignal, options: VisitOptions): AbortSignal {
  return options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
}

const observationTypes: Record<Exclude<PollWork, 'liveness'>, DriverObservationType[]> = {
  health: ['HealthObserved', 'PowerStateObserved', 'SensorsObserved', 'SelEntriesObserved'],
  inventory: ['NodeInventoryObserved'],
  firmware: ['FirmwareInventoryObserved'],
};

/**
 * Visits over Redfish. A liveness-only visit is one authenticated GET with basic auth: no session is
 * created, so none can leak, and the BMC's session table is left to its operators. A visit with heavier
 * work opens at most one session, reads what is due through it, and always logs out.
 */
export class RedfishVisitor implements Visitor {
  /**
   * `transports`: an HTTPS BMC is reached through its kept-alive connections, its certificate judged against its pin
   * before any request (`BmcTransports`). Without, every visit connects anew and verifies by the system's CAs.
   */
  constructor(private readonly transports?: BmcTransports) {}

  async visit(target: PollTarget, credential: Credential, works: readonly PollWork[], options: VisitOptions): Promise<VisitResult> {
    const started = performance.now();
    const connection = this.transports?.connectionFor(target, options.sessionLimit);
    const heavy = works.filter((w): w is Exclude<PollWork, 'liveness'> => w !== 'liveness');
    // A check goes over its own connection where the BMC has one for checks: never behind a read's slow requests.
    const dispatcher = heavy.length === 0 ? connection?.checkDispatcher : connection?.dispatcher;
    if (options.anonymous) {
      const client = new RedfishClient({
        baseUrl: target.baseUrl,
        authMode: 'none',
        maxConcurrency: 1,
        requestTimeoutMs: options.requestTimeoutMs,
        ...(dispatcher ? { dispatcher } : {}),
        ...(options.signal ? { deadline: options.signal } : {}),
        ...(options.guard ? { guard: options.guard } : {}),
        ...(options.headers ? { headers: options.headers } : {}),
      });
      try {
        await client.get('/redfish/v1');
        return { ok: true, latencyMs: performance.now() - started, observations: [] };
      } catch (error) {
        return { ok: false, latencyMs: performance.now() - started, observations: [], error };
      } finally {
        await client.close();
      }
    }
    if (heavy.length === 0) {
      const client = new RedfishClient({
        baseUrl: target.baseUrl,
        username: credential.username,
        password: credential.password,
        authMode: 'basic',
        maxConcurrency: 1,
        requestTimeoutMs: options.requestTimeoutMs,
        ...(dispatcher ? { dispatcher } : {}),
        ...(options.signal ? { deadline: options.signal } : {}),
        ...(options.guard ? { guard: options.guard } : {}),
        ...(options.headers ? { headers: options.headers } : {}),
      });
      try {
        await client.login(); // basic auth: sets the header, opens no session
        const answer = await client.get('/redfish/v1/Systems', options.ifNoneMatch ? { ifNoneMatch: options.ifNoneMatch } : {});
        const latencyMs = performance.now() - started; // the check's own latency: the root's read is not the contact's
        const model = options.describe ? await client.get('/redfish/v1').then((root) => modelOfRoot(root.body), () => undefined) : undefined;
        return { ok: true, latencyMs, observations: [], notModified: answer.status === 304, ...(answer.etag ? { etag: answer.etag } : {}), ...(model !== undefined ? { model } : {}) };
      } catch (error) {
        return { ok: false, latencyMs: performance.now() - started, observations: [], error };
      } finally {
        await client.close();
      }
    }
    const driver = new RedfishDriver({
      baseUrl: target.baseUrl,
      username: credential.username,
      password: credential.password,
      authMode: 'auto',
      reuseSession: false,
      ...(dispatcher ? { dispatcher } : {}),
      maxConcurrency: Math.max(1, Math.min(2, options.sessionLimit)),
      // Every heavy read walks the firmware inventory (the BMC and BIOS versions of the inventory come from it on
      // some models), and that collection can take minutes to answer (Supermicro X13, GB200, GH200): with the
      // short deadline an inventory read of those models never completed.
      requestTimeoutMs: Math.max(options.requestTimeoutMs, options.firmwareTimeoutMs),
      // A logout is no firmware collection: it gets the ordinary request timeout (2 s once the visit is cut short).
      logoutTimeoutMs: Math.max(options.requestTimeoutMs, 2_000),
      deadline: withSignal(AbortSignal.timeout(options.visitDeadlineMs), options),
      expand: options.expand !== false,
      ...(options.guard ? { guard: options.guard } : {}),
      ...(options.headers ? { headers: options.headers } : {}),
    });
    try {
      const only = heavy.flatMap((w) => observationTypes[w]);
      if (conditionalWorks(heavy)) {
        // Inventory and firmware come from the same resources: both are observed whichever is due, so one set of
        // validators stands for both (and unchanged resources mean both observations are unchanged).
        const read = await driver.observeUnlessUnchanged({ only: [...observationTypes.inventory, ...observationTypes.firmware], validators: options.validators });
        if (read.notModified) return { ok: true, latencyMs: performance.now() - started, observations: [], notModified: true };
        return { ok: true, latencyMs: performance.now() - started, observations: read.observations, ...(read.validators ? { validators: read.validators } : {}), ...(read.changed ? { changedResource: read.changed } : {}) };
      }
      const observations = await driver.observe({ only });
      return { ok: true, latencyMs: performance.now() - started, observations };
    } catch (error) {
      return { ok: false, latencyMs: performance.now() - started, observations: [], error };
    } finally {
      await driver.close();
    }
  }
}

/**
 * Visits over IPMI (RMCP+, `ipmitool -I lanplus`), for BMCs without Redfish. Each ipmitool run is one session
 * that ends with the command, so a visit holds at most one session at a time. The liveness check is one `mc info`;
 * heavy work reads what the IPMI driver can (identity, power state, health and sensors; IPMI has no firmware
 * inventory, so firmware work yields nothing and is not an error).
 */
export class IpmiVisitor implements Visitor {
  /** The RMCP+ cipher suite that worked with each BMC: asked for first next time. */
  readonly #suites = new Map<string, number>();

  constructor(private readonly ipmitool?: string) {}

  async visit(target: PollTarget, credential: Credential, works: readonly PollWork[], options: VisitOptions): Promise<VisitResult> {
    const started = performance.now();
    const known = this.#suites.get(target.nodeId);
    // Suite 17 (SHA-256, AES) first, then 3 (SHA-1, AES), which older BMCs and OpenIPMI offer alone. A BMC that does
    // not offer a suite says so at once ("invalid authentication algorithm"); only that moves to the next suite, so a
    // silent BMC costs one deadline, not two. Letting ipmitool negotiate instead costs 10 s on such BMCs.
    const suites = known !== undefined ? [known] : [17, 3];
    let lastError: unknown;
    for (const suite of suites) {
      if (fenced(options) || options.signal?.aborted) return { ok: false, latencyMs: performance.now() - started, observations: [], error: fencedError(target) };
      try {
        const observations = await this.#visitWith(target, credential, works, options, suite);
        this.#suites.set(target.nodeId, suite);
        return { ok: true, latencyMs: performance.now() - started, observations };
      } catch (error) {
        lastError = error;
        const stderr = (error as { details?: { stderr?: string } }).details?.stderr ?? '';
        if (!/invalid (authentication|integrity|confidentiality) algorithm|cipher suite/i.test(stderr)) break;
      }
    }
    return { ok: false, latencyMs: performance.now() - started, observations: [], error: lastError };
  }

  async #visitWith(target: PollTarget, credential: Credential, works: readonly PollWork[], options: VisitOptions, cipherSuite: number): Promise<DriverObservation[]> {
    const address = new URL(target.baseUrl);
    const driver = new IpmiDriver({
      host: address.hostname,
      ...(address.port ? { port: Number(address.port) } : {}),
      username: credential.username,
      password: credential.password,
      cipherSuite,
      commandTimeoutMs: options.requestTimeoutMs,
      ...(this.ipmitool ? { ipmitool: this.ipmitool } : {}),
    });
    const heavy = works.filter((w): w is Exclude<PollWork, 'liveness'> => w !== 'liveness');
    try {
      if (heavy.length === 0) {
        await driver.run(['mc', 'info']);
        return [];
      }
      return await driver.observe({ only: heavy.flatMap((w) => observationTypes[w]) });
    } finally {
      await driver.close();
    }
  }
}

/**
 * Visits over SNMP v2c, for PDUs (and other devices with an SNMP agent only); the credential's password is the
 * community. SNMP has no sessions: each visit opens one UDP socket and closes it, and the poller gives an SNMP device
 * one visit at a time unless its registration says otherwise (management cards answer one request at a time). The
 * liveness check is one GET of `sysUpTime.0`; health and inventory work is one walk of the device (identity,
 * interfaces, outlets: `NetworkDeviceObserved`), however many of the two are due; SNMP has no firmware inventory,
 * so firmware work yields nothing and is not an error. Each request has half the request deadline and one retry
 * (UDP loses datagrams), so a silent device costs one request deadline; a walk has the visit deadline.
 */
export class SnmpVisitor implements Visitor {
  async visit(target: PollTarget, credential: Credential, works: readonly PollWork[], options: VisitOptions): Promise<VisitResult> {
    const started = performance.now();
    const address = new URL(target.baseUrl);
    const heavy = works.some((w) => w === 'health' || w === 'inventory');
    const driver = new SnmpDriver({
      host: address.hostname,
      ...(address.port ? { port: Number(address.port) } : {}),
      community: credential.password,
      timeoutMs: Math.max(1, Math.ceil(options.requestTimeoutMs / 2)),
      retries: 1,
      deadline: withSignal(AbortSignal.timeout(heavy ? options.visitDeadlineMs : options.requestTimeoutMs), options),
    });
    try {
      if (fenced(options)) throw fencedError(target);
      if (!heavy) {
        // A liveness check, or firmware work alone (nothing to read over SNMP): one GET says the agent answers.
        await driver.ping();
        return { ok: true, latencyMs: performance.now() - started, observations: [] };
      }
      const observations = await driver.observe();
      return { ok: true, latencyMs: performance.now() - started, observations };
    } catch (error) {
      return { ok: false, latencyMs: performance.now() - started, observations: [], error };
    } finally {
      await driver.close();
    }
  }
}

/** The visitor for a target's protocol: Redfish unless the target says IPMI or SNMP. */
export class ProtocolVisitor implements Visitor {
  constructor(
    private readonly redfish: Visitor = new RedfishVisitor(),
    private readonly ipmi: Visitor = new IpmiVisitor(),
    private readonly snmp: Visitor = new SnmpVisitor(),
  ) {}

  visit(target: PollTarget, credential: Credential, works: readonly PollWork[], options: VisitOptions): Promise<VisitResult> {
    const visitor = target.protocol === 'ipmi' ? this.ipmi : target.protocol === 'snmp' ? this.snmp : this.redfish;
    return visitor.visit(target, credential, works, options);
  }
}
