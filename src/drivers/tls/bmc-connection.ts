/**
 * The connections a poller keeps to one BMC between visits: one undici pool per BMC, its sockets made by
 * `bmcConnector` (certificate judged before any request), kept open between checks for as long as the BMC says it
 * keeps idle connections (its `Keep-Alive: timeout`), and closed after each answer where it says `Connection: close`.
 * Where connections are not kept, the TLS session is: the next handshake is abbreviated where the BMC resumes sessions.
 *
 * A BMC serves few connections (4 to 32, less than its web server's threads): the pool never holds more than
 * `connections`, which the poller sets at or under the BMC's session limit, so connections kept open count against
 * what the BMC serves.
 */
import { Pool, type Dispatcher } from 'undici';
import { bmcConnector, type BmcConnectorOptions } from './bmc-connector.js';
import type { BmcTrust, TlsMinVersion, TrustedCertificate } from './bmc-tls-policy.js';

export interface BmcConnectionOptions {
  /** `https://10.20.1.7` (or `http://` where the site allows it). */
  origin: string;
  trust: BmcTrust;
  minVersion?: TlsMinVersion;
  /** Connections at once (at most the BMC's session limit). */
  connections: number;
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
  #pool: Pool | undefined;
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
  }

  get trust(): BmcTrust {
    return this.#connector.trust;
  }

  /** The pool requests go through (made at first use). */
  get dispatcher(): Dispatcher {
    if (!this.#pool) {
      this.poolsMade += 1;
      this.#pool = new Pool(this.origin, {
        connect: bmcConnector(this.#connector),
        connections: Math.max(1, this.options.connections),
        pipelining: 1,
        keepAliveTimeout: this.options.keepAliveMs,
        keepAliveMaxTimeout: this.options.keepAliveMs,
        // Deadlines are the client's own (per request, per visit); the pool adds none.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
    }
    return this.#pool;
  }

  /**
   * A new trust (a pin taken, a certificate accepted, a site CA named): connections made under the old one are let
   * go, so every request from now on goes over a connection judged by the new one.
   */
  setTrust(trust: BmcTrust): void {
    this.#connector.trust = trust;
    const pool = this.#pool;
    this.#pool = undefined;
    if (pool) void pool.destroy(connectionsReleased()).catch(() => undefined);
  }

  /** Pins the certificate a connection just trusted at first use: kept connections stay (they were judged). */
  pinTo(fingerprint: string): void {
    this.#connector.trust = { kind: 'pin', fingerprint };
  }

  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    if (pool) await pool.destroy(connectionsReleased()).catch(() => undefined);
  }
}
