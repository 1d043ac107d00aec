/**
 * One simulated BMC's HTTPS side: its own key and self-signed certificate (or one signed by the CA a test names),
 * made at its first connection and kept, the TLS versions and ciphers of its generation, a handshake that takes the
 * time its generation takes, session resumption or not, and a bounded pool of connections. A certificate fault
 * (`certificate-replaced`) gives it a new key and certificate, as a reflash does, or as someone answering in its
 * place would: its open connections drop.
 *
 * It also counts what a pinning client must never send to a BMC it does not trust: requests that carry a credential
 * (an `Authorization` header, a session token, a session POST).
 */
import { constants, randomBytes, type KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { createSecureContext, TLSSocket, type SecureContext } from 'node:tls';
import { fnv1a } from '../random.ts';
import { issueCertificate, newBmcKey, type CertificateSubject, type IssuedCertificate } from './self-signed-certificate.ts';
import type { BmcTlsProfile } from './tls-profiles.ts';

/** How the simulator serves HTTPS (`SimulatorOptions.tls`). */
export interface SimTlsOptions {
  /** Who signs the BMCs' certificates. Omitted: each BMC signs its own, as BMCs do out of the box. */
  issuer?: { subject: CertificateSubject; key: KeyObject };
  /** How long a certificate is valid from when it is made (default 3650 days; a few days makes an expiring one). */
  validityDays?: number;
  /** TLS behaviour instead of the vendor profiles' own (every BMC), e.g. to make a whole fleet TLS 1.2 only. */
  profile?: Partial<BmcTlsProfile>;
}

export interface BmcTlsCounters {
  /** Handshakes completed, and how many of them resumed a session. */
  handshakes: number;
  resumed: number;
  /** Handshakes the client broke off (a certificate it refused, a version it would not speak). */
  handshakesFailed: number;
  /** Connections closed at accept because the BMC's pool was full. */
  connectionsRefused: number;
  connectionsOpen: number;
  connectionsPeak: number;
  /** Requests that carried a credential: an Authorization header, an X-Auth-Token, or a session POST. */
  credentialsReceived: number;
  /** Certificates this BMC has had (1, plus one per `certificate-replaced`). */
  certificates: number;
}

interface Identity {
  certificate: IssuedCertificate;
  context: SecureContext;
}

const day = 86_400_000;

export class BmcTlsEndpoint {
  readonly counters: BmcTlsCounters = { handshakes: 0, resumed: 0, handshakesFailed: 0, connectionsRefused: 0, connectionsOpen: 0, connectionsPeak: 0, credentialsReceived: 0, certificates: 0 };
  #identity: Identity | undefined;
  readonly #open = new Set<Socket>();

  constructor(
    readonly bmcId: string,
    readonly address: string,
    readonly profile: BmcTlsProfile,
    private readonly options: SimTlsOptions,
    /** The simulator's latency scale (scenario `latencyScale`), read at each handshake. */
    private readonly latencyScale: () => number,
  ) {}

  /** The certificate served now (made on first use). */
  get certificate(): IssuedCertificate {
    return this.#current().certificate;
  }

  #current(): Identity {
    if (this.#identity) return this.#identity;
    const key = newBmcKey();
    const now = Date.now();
    this.counters.certificates += 1;
    // A serial of its own: 12 random bytes, prefixed so that two certificates of one BMC never share one.
    const serial = Buffer.concat([Buffer.from([0x10 | (this.counters.certificates & 0x0f)]), Buffer.from(fnv1a(this.bmcId).toString(16).padStart(8, '0'), 'hex'), randomBytes(8)]);
    const certificate = issueCertificate({
      subject: { commonName: this.address, organization: `simulated ${this.bmcId}` },
      serial,
      notBefore: new Date(now - day),
      notAfter: new Date(now + (this.options.validityDays ?? 3650) * day),
      altNames: [this.address],
      key,
      ...(this.options.issuer ? { issuer: this.options.issuer } : {}),
    });
    const { profile } = this;
    // No root store: a server context verifies no peer, and loading the roots is most of a context's cost.
    const context = createSecureContext({
      key: certificate.keyPem,
      cert: certificate.pem,
      ca: [],
      minVersion: profile.minVersion,
      maxVersion: profile.maxVersion,
      ...(profile.ciphers ? { ciphers: profile.ciphers } : {}),
      // Without tickets, and with no session cache (Node keeps none unless asked), nothing can be resumed.
      ...(profile.sessionResumption ? {} : { secureOptions: constants.SSL_OP_NO_TICKET }),
    });
    this.#identity = { certificate, context };
    return this.#identity;
  }

  /**
   * Takes a TCP connection made to this BMC: refused when its pool is full, else after the handshake latency it
   * becomes a TLS connection, handed to `deliver` once the handshake completes.
   */
  accept(socket: Socket, deliver: (secure: TLSSocket) => void): void {
    const { counters, profile } = this;
    if (this.#open.size >= profile.connectionLimit) {
      counters.connectionsRefused += 1;
      socket.destroy();
      return;
    }
    this.#open.add(socket);
    counters.connectionsOpen = this.#open.size;
    counters.connectionsPeak = Math.max(counters.connectionsPeak, this.#open.size);
    socket.once('close', () => {
      this.#open.delete(socket);
      counters.connectionsOpen = this.#open.size;
    });
    socket.on('error', () => socket.destroy());
    const start = (): void => {
      if (socket.destroyed) return;
      const secure = new TLSSocket(socket, { isServer: true, secureContext: this.#current().context });
      let done = false;
      secure.on('error', () => {
        if (!done) counters.handshakesFailed += 1;
        done = true;
        secure.destroy();
      });
      secure.once('secure', () => {
        done = true;
        counters.handshakes += 1;
        if (secure.isSessionReused()) counters.resumed += 1;
        deliver(secure);
      });
    };
    const delay = profile.handshakeLatencyMs * this.latencyScale();
    if (delay > 0) setTimeout(start, delay).unref();
    else start();
  }

  /** Counts a request that carries a credential (called for every request this BMC answers over TLS). */
  noteRequest(request: IncomingMessage): void {
    const { headers } = request;
    if (headers.authorization !== undefined || headers['x-auth-token'] !== undefined || (request.method === 'POST' && /\/Sessions\/?$/i.test(request.url ?? ''))) this.counters.credentialsReceived += 1;
  }

  /** A new key and certificate (a reflash, or another machine answering at this address); open connections drop. */
  replaceCertificate(): void {
    this.#identity = undefined;
    this.#current();
    for (const socket of this.#open) socket.destroy();
  }
}
