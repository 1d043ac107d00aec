/**
 * The simulator's HTTPS side: every BMC reached at its own address (per-address and wildcard addressing) answers TLS
 * with its own certificate; the control API on 127.0.0.1 stays plain HTTP. Connections are handed to one HTTP server
 * per keep-alive behaviour, since how long an idle connection is kept is the server's setting, not the request's.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { BmcTlsEndpoint, type BmcTlsCounters, type SimTlsOptions } from './bmc-tls-endpoint.ts';
import { tlsProfileOf } from './tls-profiles.ts';

export interface TlsBmc {
  id: string;
  address: string | undefined;
  capture: { name: string };
}

export class TlsListener {
  readonly #byAddress = new Map<string, BmcTlsEndpoint>();
  readonly #byId = new Map<string, BmcTlsEndpoint>();
  readonly #servers = new Map<number, Server>();
  readonly #endpointOf = new WeakMap<object, BmcTlsEndpoint>();

  constructor(
    bmcs: readonly TlsBmc[],
    options: SimTlsOptions,
    latencyScale: () => number,
    private readonly dispatch: RequestListener,
  ) {
    for (const bmc of bmcs) {
      if (!bmc.address) continue;
      const endpoint = new BmcTlsEndpoint(bmc.id, bmc.address, { ...tlsProfileOf(bmc.capture.name), ...options.profile }, options, latencyScale);
      this.#byAddress.set(bmc.address, endpoint);
      this.#byId.set(bmc.id, endpoint);
    }
  }

  /** Takes a connection if it was made to a BMC's address (true), else leaves it to plain HTTP (false). */
  adopt(socket: Socket): boolean {
    const endpoint = this.#byAddress.get((socket.localAddress ?? '').replace(/^::ffff:/, ''));
    if (!endpoint) return false;
    endpoint.accept(socket, (secure) => {
      this.#endpointOf.set(secure, endpoint);
      this.#serverFor(endpoint.profile.keepAliveTimeoutMs).emit('connection', secure);
    });
    return true;
  }

  #serverFor(keepAliveTimeoutMs: number): Server {
    let server = this.#servers.get(keepAliveTimeoutMs);
    if (!server) {
      const listener: RequestListener = (request: IncomingMessage, response: ServerResponse) => {
        this.#endpointOf.get(request.socket)?.noteRequest(request);
        // A BMC that keeps no idle connection answers `Connection: close`.
        if (keepAliveTimeoutMs === 0) response.shouldKeepAlive = false;
        this.dispatch(request, response);
      };
      server = createServer({ keepAliveTimeout: Math.max(1, keepAliveTimeoutMs), requestTimeout: 0 }, listener);
      this.#servers.set(keepAliveTimeoutMs, server);
    }
    return server;
  }

  endpoint(bmcId: string): BmcTlsEndpoint | undefined {
    return this.#byId.get(bmcId);
  }

  /** The counters of one BMC, or of the whole fleet summed (peaks are the largest of any BMC). */
  counters(bmcId?: string): BmcTlsCounters | undefined {
    if (bmcId !== undefined) return this.#byId.get(bmcId)?.counters;
    const total: BmcTlsCounters = { handshakes: 0, resumed: 0, handshakesFailed: 0, connectionsRefused: 0, connectionsOpen: 0, connectionsPeak: 0, credentialsReceived: 0, certificates: 0 };
    for (const { counters } of this.#byId.values()) {
      total.handshakes += counters.handshakes;
      total.resumed += counters.resumed;
      total.handshakesFailed += counters.handshakesFailed;
      total.connectionsRefused += counters.connectionsRefused;
      total.connectionsOpen += counters.connectionsOpen;
      total.connectionsPeak = Math.max(total.connectionsPeak, counters.connectionsPeak);
      total.credentialsReceived += counters.credentialsReceived;
      total.certificates += counters.certificates;
    }
    return total;
  }

  close(): void {
    for (const server of this.#servers.values()) server.close();
  }
}
