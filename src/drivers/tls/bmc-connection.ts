/**
 * The connections a poller keeps to one BMC between visits: one undici pool per BMC, its sockets made by
 * `bmcConnector` (certificate judged before any request), kept open between checks for as long as the BMC says it
 * keeps idle connections (its `Keep-Alive: timeout`), and closed after each answer where it says `Connection: close`.
 * Where connections are not kept, the TLS session is: the next handshake is abbreviated where the BMC resumes sessions.
 *
 * A BMC serves few connections (4 to 32, less than its web server's threads): the reads' pool never holds more than
 * `connections`, which the poller sets at or under the BMC's session limit, and checks get one more only where that
 * limit leaves room for it (`checkConnection`), so connections kept open count against what the BMC serves.
 */
import { Pool, type Dispatcher } from 'undici';
import { bmcConnector, type BmcConnectorOptions } from './bmc-connector.js';
import type { BmcTrust, TlsMinVersion, TrustedCertificate } from './bmc-tls-policy.js';

export interface BmcConnectionOptions {
  /** `https://10.20.1.7` (or `http://` where the site allows it). */
  origin: string;
  trust: BmcTrust;
  minVersion?: TlsMinVersion;
  /** Connections at once for reads (at most the BMC's session limit). */
  connections: number;
  /**
   * One more connection, for liveness checks alone (where the BMC's session limit leaves room for it): a check never
   * waits behind a heavy read whose requests hold every read connection (a firmware collection answers in minutes).
   */
  checkConnection?: boolean;
  /** How long an idle connection is kept at most (the BMC's own `Keep-Alive: timeout` wins when shorter). */
  keepAliveMs: number;
  /** Connect and handshake deadline. */
  connectTimeoutMs: number;
  onTrusted?: (trusted: TrustedCertificate, origin: string) => void;
}

/**
 * Why a BMC's connections are let go (a new trust, the BMC released, the poller stopping). Made without a stack trace:
 * undici hands it to every socket and request it ends, and a poller releasing thousands of BMCs at once (a stop, a
 * shard handed over) spent most of that turn of its event loop capturing and formatting stacks.
 */
function connectionsReleased(): Error {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new Error('BMC connections released');
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export class BmcConnection {
  readonly origin: string;
  readonly #connector: BmcConnectorOptions;
  /** One connect function for both pools: their TLS sessions and judged certificates are shared. */
  readonly #connect: ReturnType<typeof bmcConnector>;
  #pool: Pool | undefined;
  #checkPool: Pool | undefined;
  /** Pools made (one at first use, one after each change of trust): how often connections were started over. */
  poolsMade = 0;

  constructor(private readonly options: BmcConnectionOptions) {
    this.origin = options.origin;
    this.#connector = {
      trust: options.trust,
      ...(options.minVersion ? { minVersion: options.minVersion } : {}),
      timeoutMs: options.connectTimeoutMs,
      ...(options.onTrusted ? { onTrusted: options.onTrusted } : {}),
    };
    this.#connect = bmcConnector(this.#connector);
  }

  get trust(): BmcTrust {
    return this.#connector.trust;
  }

  /** The pool reads go through (made at first use). */
  get dispatcher(): Dispatcher {
    if (!this.#pool) {
      this.poolsMade += 1;
      this.#pool = this.#newPool(this.options.connections);
    }
    return this.#pool;
  }

  /** The connection liveness checks go through: their own where `checkConnection`, else the reads' pool. */
  get checkDispatcher(): Dispatcher {
    if (!this.options.checkConnection) return this.dispatcher;
    this.#checkPool ??= this.#newPool(1);
    return this.#checkPool;
  }

  #newPool(connections: number): Pool {
    return new Pool(this.origin, {
      connect: this.#connect,
      connections: Math.max(1, connections),
      pipelining: 1,
      keepAliveTimeout: this.options.keepAliveMs,
      keepAliveMaxTimeout: this.options.keepAliveMs,
      // Deadlines are the client's own (per request, per visit); the pool adds none.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  /**
   * A new trust (a pin taken, a certificate accepted, a site CA named): connections made under the old one are let
   * go, so every request from now on goes over a connection judged by the new one.
   */
  setTrust(trust: BmcTrust): void {
    this.#connector.trust = trust;
    void this.close();
  }

  /** Pins the certificate a connection just trusted at first use: kept connections stay (they were judged). */
  pinTo(fingerprint: string): void {
    this.#connector.trust = { kind: 'pin', fingerprint };
  }

  async close(): Promise<void> {
    const pools = [this.#pool, this.#checkPool];
    this.#pool = undefined;
    this.#checkPool = undefined;
    await Promise.all(pools.map((pool) => pool?.destroy(connectionsReleased()).catch(() => undefined)));
  }
}
