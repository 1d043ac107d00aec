import type { CertificateSummary, DataOf, Lease, ProposedEvent } from '../../events/index.js';
import { BmcConnection, type BmcTrust, type DriverError, type TlsMinVersion, type TrustedCertificate } from '../drivers/index.js';
import { nameUuid, type EventStore } from '../ledger/index.js';
import { isStaleEpoch } from './lease-errors.js';
import type { PollTarget } from './poll-target.js';

/**
 * How a site's BMC certificates are trusted: `pin` (trust on first use, the default), a CA bundle (PEM) the site's
 * BMC certificates are signed by, or `insecure` (nothing verified; logged once per site).
 */
export interface SiteTlsPolicy {
  trust: 'pin' | 'insecure' | { caBundle: string };
  /** The oldest TLS version allowed (default TLS 1.2). */
  minVersion?: TlsMinVersion;
}

type CertificateEvent =
  | ProposedEvent<'BmcCertificateObserved', DataOf<'BmcCertificateObserved'>>
  | ProposedEvent<'BmcCertificateChanged', DataOf<'BmcCertificateChanged'>>;

interface BmcPin {
  /** The fingerprint pinned (first use, or an operator's acceptance). */
  fingerprint?: string;
  accepted: boolean;
  /** The last certificate the ledger has (or is taking) for this BMC. */
  recorded?: string;
  /** A certificate other than the pin was presented: nothing is sent until it is accepted (or a site CA is named). */
  latch?: CertificateSummary;
}

export interface BmcTransportsOptions {
  store: Pick<EventStore, 'append'>;
  /** By site; `*` for every site not named. Default: pin. */
  sites?: Readonly<Record<string, SiteTlsPolicy>>;
  /** The longest an idle connection is kept (a BMC's own shorter `Keep-Alive: timeout` wins). */
  keepAliveMs: number;
  connectTimeoutMs: number;
  clock: () => number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /**
   * Cluster mode: the lease the node's shard is polled under here. A certificate event carries it, so the ledger
   * refuses one taken under a lease this process no longer holds (the shard's new owner sees and records for itself).
   */
  leaseOf?: (nodeId: string) => Lease | undefined;
}

/**
 * The poller's connections to its HTTPS BMCs and what it trusts of each: one kept-alive pool per BMC
 * (`BmcConnection`), the certificate pinned for it, and the latch a changed certificate sets. Pins and latches are
 * facts of the log (`BmcCertificateObserved`, `BmcCertificateChanged`, `BmcCertificateAccepted`), followed like the
 * poller's other intents, so a restarted poller (or another process taking the shard) pins what this one pinned.
 * Events not yet taken by the ledger are kept and retried at each flush; their ids are derived from their content, so
 * a retry is a replay.
 */
export class BmcTransports {
  readonly #pins = new Map<string, BmcPin>();
  readonly #connections = new Map<string, BmcConnection>();
  /** The address each connection was made for, as the target gave it. */
  readonly #addresses = new Map<string, string>();
  readonly #unrecorded = new Map<string, { nodeId: string; event: CertificateEvent }>();
  readonly #insecureLogged = new Set<string>();
  #recording: Promise<void> | undefined;
  #recordAgain = false;
  /** Connections let go and not yet closed (`#closeInSlices`), and the closes started. */
  readonly #toClose: BmcConnection[] = [];
  readonly #closes = new Set<Promise<void>>();
  #closing: Promise<void> | undefined;

  constructor(private readonly options: BmcTransportsOptions) {}

  #pin(nodeId: string): BmcPin {
    let pin = this.#pins.get(nodeId);
    if (!pin) {
      pin = { accepted: false };
      this.#pins.set(nodeId, pin);
    }
    return pin;
  }

  #policy(site: string): SiteTlsPolicy {
    return this.options.sites?.[site] ?? this.options.sites?.['*'] ?? { trust: 'pin' };
  }

  #trustOf(target: PollTarget): BmcTrust {
    const policy = this.#policy(target.site);
    if (policy.trust === 'insecure') {
      if (!this.#insecureLogged.has(target.site)) {
        this.#insecureLogged.add(target.site);
        this.options.log?.('BMC certificates of this site are not verified: the site is configured insecure', { site: target.site });
      }
      return { kind: 'insecure' };
    }
    if (policy.trust !== 'pin') return { kind: 'site-ca', ca: policy.trust.caBundle };
    const pin = this.#pins.get(target.nodeId);
    return { kind: 'pin', fingerprint: pin?.fingerprint, ...(pin?.accepted ? { accepted: true } : {}) };
  }

  /**
   * The connections to a target's BMC, when it is reached over HTTPS (plain HTTP and the other protocols connect per
   * visit, as before). `connections` is at most the BMC's session limit.
   */
  connectionFor(target: PollTarget, connections: number): BmcConnection | undefined {
    const existing = this.#connections.get(target.nodeId);
    // The common case, every check: the same address as last time (no URL parsed).
    if (existing && this.#addresses.get(target.nodeId) === target.baseUrl) return existing;
    if (!target.baseUrl.toLowerCase().startsWith('https:')) {
      if (existing) this.release(target.nodeId); // now reached over plain http: per visit, as before
      return undefined;
    }
    const origin = new URL(target.baseUrl).origin;
    this.#addresses.set(target.nodeId, target.baseUrl);
    if (existing && existing.origin === origin) return existing;
    if (existing) void existing.close(); // another BMC answers at another address
    const policy = this.#policy(target.site);
    const connection = new BmcConnection({
      origin,
      trust: this.#trustOf(target),
      ...(policy.minVersion ? { minVersion: policy.minVersion } : {}),
      connections: Math.max(1, Math.min(2, connections)),
      // Checks get a connection of their own where the session limit leaves room beside a read's two.
      checkConnection: connections >= 3,
      keepAliveMs: this.options.keepAliveMs,
      connectTimeoutMs: this.options.connectTimeoutMs,
      onTrusted: (trusted, at) => this.#trusted(target.nodeId, trusted, at),
    });
    this.#connections.set(target.nodeId, connection);
    return connection;
  }

  /** Whether a changed certificate latches this target (no credential goes to it). A site CA lifts the latch. */
  latched(target: PollTarget): boolean {
    return this.#pins.get(target.nodeId)?.latch !== undefined && this.#policy(target.site).trust === 'pin';
  }

  /** A certificate a connection trusted: pinned if it was the first, recorded if the ledger does not have it yet. */
  #trusted(nodeId: string, { certificate, trust }: TrustedCertificate, origin: string): void {
    const pin = this.#pin(nodeId);
    if (trust === 'first-use' && pin.fingerprint === undefined) {
      pin.fingerprint = certificate.fingerprint;
      // The connection just judged stays; the next ones are judged against the pin.
      const connection = this.#connections.get(nodeId);
      if (connection) connection.pinTo(certificate.fingerprint);
    }
    if (pin.recorded === certificate.fingerprint) return;
    pin.recorded = certificate.fingerprint;
    const at = new Date(this.options.clock()).toISOString();
    this.#keep(nodeId, {
      eventId: nameUuid(`bmc-certificate-observed:${nodeId}:${certificate.fingerprint}`),
      type: 'BmcCertificateObserved',
      data: { nodeId, address: origin, certificate, trust, at },
      actor: this.#actor(nodeId),
    });
  }

  /** A visit met a certificate other than the pin: the target is latched and the change recorded (once per certificate). */
  refused(target: PollTarget, error: DriverError): void {
    const presented = error.details.certificate;
    const pinned = error.details.pinnedFingerprint;
    if (error.code !== 'DRIVER_CERTIFICATE_CHANGED' || !presented || !pinned) return;
    const pin = this.#pin(target.nodeId);
    const fresh = pin.latch?.fingerprint !== presented.fingerprint;
    pin.latch = presented;
    if (!fresh) return;
    this.options.log?.('a BMC presented a certificate other than the one pinned: no credential sent, the node is latched until an operator accepts it', {
      nodeId: target.nodeId,
      pinned,
      presented: presented.fingerprint,
      subject: presented.subject,
    });
    this.#keep(target.nodeId, {
      eventId: nameUuid(`bmc-certificate-changed:${target.nodeId}:${pinned}:${presented.fingerprint}`),
      type: 'BmcCertificateChanged',
      data: { nodeId: target.nodeId, address: error.details.url ?? target.baseUrl, pinnedFingerprint: pinned, presented, at: new Date(this.options.clock()).toISOString() },
      actor: this.#actor(target.nodeId),
    });
  }

  /** The poller, under the node's shard lease when it polls by lease. */
  #actor(nodeId: string): CertificateEvent['actor'] {
    const lease = this.options.leaseOf?.(nodeId);
    return { kind: 'system', id: 'poller', ...(lease ? { lease } : {}) };
  }

  #keep(nodeId: string, event: CertificateEvent): void {
    this.#unrecorded.set(event.eventId ?? '', { nodeId, event });
    void this.record();
  }

  /**
   * Stores the certificate events not stored yet (retried at every flush). One pass at a time: a fleet's first sweep
   * pins thousands of certificates at once, and a pass per pin, each over every event waiting, would append each
   * event as many times as there are pins (replays, but each a round trip). A call during a pass is answered by a
   * pass after it; a pass appends up to 16 nodes' events at once (their streams differ; group commit joins them).
   */
  record(): Promise<void> {
    if (this.#recording) {
      this.#recordAgain = true;
      return this.#recording;
    }
    const pass = async (): Promise<void> => {
      do {
        this.#recordAgain = false;
        const waiting = [...this.#unrecorded];
        for (let at = 0; at < waiting.length; at += 16) {
          const results = await Promise.all(
            waiting.slice(at, at + 16).map(async ([id, { nodeId, event }]) => {
              try {
                await this.options.store.append(`node-${nodeId}`, [event]);
                this.#unrecorded.delete(id);
                return true;
              } catch (failure) {
                if (isStaleEpoch(failure)) {
                  // Taken under a lease since superseded: the shard's owner now records what it sees itself.
                  this.#unrecorded.delete(id);
                  this.options.log?.('a BMC certificate event taken under a superseded lease is dropped', { nodeId, type: event.type });
                  return true;
                }
                this.options.log?.('could not record a BMC certificate event yet; retried at the next flush', { nodeId, type: event.type, error: String(failure) });
                return false;
              }
            }),
          );
          if (results.includes(false)) return; // the ledger is away: the next flush tries again
        }
      } while (this.#recordAgain);
    };
    this.#recording = pass().finally(() => {
      this.#recording = undefined;
    });
    return this.#recording;
  }

  get unrecorded(): number {
    return this.#unrecorded.size;
  }

  // --- Facts followed from the log ---

  /** `BmcCertificateObserved`: the first one recorded is the pin (a later one was trusted by a site CA or acceptance). */
  observed(nodeId: string, fingerprint: string, trust: string): void {
    const pin = this.#pin(nodeId);
    pin.recorded = fingerprint;
    if (pin.fingerprint === undefined && trust === 'first-use') this.#repin(nodeId, pin, fingerprint, false);
  }

  /** `BmcCertificateChanged`: latched until accepted (unless accepted already). */
  changed(nodeId: string, presented: CertificateSummary): void {
    const pin = this.#pin(nodeId);
    if (pin.fingerprint !== presented.fingerprint) pin.latch = presented;
  }

  /** `BmcCertificateAccepted`: the operator's certificate is the pin from now on, and the latch is lifted. */
  accepted(nodeId: string, fingerprint: string): void {
    const pin = this.#pin(nodeId);
    delete pin.latch;
    this.#repin(nodeId, pin, fingerprint, true);
  }

  #repin(nodeId: string, pin: BmcPin, fingerprint: string, accepted: boolean): void {
    pin.fingerprint = fingerprint;
    pin.accepted = accepted;
    this.#connections.get(nodeId)?.setTrust({ kind: 'pin', fingerprint, ...(accepted ? { accepted: true } : {}) });
  }

  /** A target no longer polled here: its connections close (its pin stays: it is a fact of the log). */
  release(nodeId: string): void {
    const connection = this.#connections.get(nodeId);
    this.#connections.delete(nodeId);
    this.#addresses.delete(nodeId);
    if (connection) this.#closeInSlices([connection]);
  }

  /** Connections kept or being closed: what this poller holds open on its BMCs. */
  get connectionsHeld(): number {
    return this.#connections.size + this.#toClose.length;
  }

  async close(): Promise<void> {
    const connections = [...this.#connections.values()];
    this.#connections.clear();
    this.#addresses.clear();
    this.#closeInSlices(connections);
    while (this.#closing) await this.#closing;
    await Promise.all([...this.#closes]);
  }

  /**
   * Closes connections a slice per turn of the event loop. Closing one destroys its TLS sockets and ends what was in
   * flight on them, synchronously; a stop or a shard handed over releases thousands of BMCs at once, and closing them
   * all in one turn held the poller's timers (and every liveness check due) for 0.7 s at 2,000 BMCs (`bench:scale --tls`,
   * at its stop).
   */
  #closeInSlices(connections: readonly BmcConnection[]): void {
    this.#toClose.push(...connections);
    if (this.#closing || this.#toClose.length === 0) return;
    this.#closing = (async () => {
      while (this.#toClose.length > 0) {
        for (const connection of this.#toClose.splice(0, closeSlice)) {
          const closed: Promise<void> = connection.close().finally(() => this.#closes.delete(closed));
          this.#closes.add(closed);
        }
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    })().finally(() => {
      this.#closing = undefined;
    });
  }
}

/** Connections closed per turn of the event loop when many are let go at once. */
const closeSlice = 32;
