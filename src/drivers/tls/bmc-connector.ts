/**
 * The connections a Redfish client makes to one BMC: TCP for `http:`, TLS for `https:` with the certificate judged
 * (`judgeCertificate`) on `secureConnect`, before the socket is handed to undici, so nothing of a request (its
 * `Authorization` header, a session token, a login POST) is written to a BMC whose certificate was refused.
 *
 * TLS sessions are kept per origin and offered at the next connection, so a BMC that closes idle connections (or a
 * client whose connections were let go between checks) pays an abbreviated handshake where the BMC resumes sessions.
 * A resumed session carries no certificate chain: the certificate of the full handshake that made it (judged then)
 * is judged again against the trust of now, so a pin changed since refuses it.
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, createSecureContext, type SecureContext, type TLSSocket } from 'node:tls';
import type { buildConnector } from 'undici';
import { DriverError, toDriverError } from '../driver-error.js';
import { judgeCertificate, type BmcTlsOptions, type TrustedCertificate } from './bmc-tls-policy.js';

export interface BmcConnectorOptions extends BmcTlsOptions {
  /** Read at each connection: a pin taken or a certificate accepted applies to the next one. */
  /** Connect and handshake deadline. */
  timeoutMs: number;
  /** Called for every certificate trusted (once per connection; cheap to compare by fingerprint). */
  onTrusted?: (trusted: TrustedCertificate, origin: string) => void;
}

/** The undici `connect` function for one client or one BMC's pool. */
export type BmcConnector = buildConnector.connector;

/** OpenSSL's words for "we share no protocol version". */
const versionFailure = /UNSUPPORTED_PROTOCOL|PROTOCOL_VERSION|NO_PROTOCOLS_AVAILABLE|WRONG_SSL_VERSION|VERSION_TOO_LOW|VERSION_TOO_HIGH/i;

/**
 * One client context per (CA bundle, oldest version), shared by every connection: `tls.connect` given options alone
 * builds a context per connection, the system's root store loaded into each (about 2 ms of CPU per handshake here).
 * A pin or `insecure` verifies nothing by a CA, so their context holds no roots at all.
 */
const contexts = new Map<string, SecureContext>();
function clientContext(ca: string | undefined, minVersion: string): SecureContext {
  const key = `${minVersion}\u0000${ca ?? ''}`;
  let context = contexts.get(key);
  if (!context) {
    context = createSecureContext({ minVersion: minVersion as 'TLSv1.2' | 'TLSv1.3', ca: ca ?? [] });
    contexts.set(key, context);
  }
  return context;
}

export function bmcConnector(options: BmcConnectorOptions): BmcConnector {
  const sessions = new Map<string, Buffer>();
  /** The certificate each origin's full handshake presented and was trusted: what a session resumed from it carries. */
  const judged = new Map<string, TrustedCertificate>();
  const minVersion = options.minVersion ?? 'TLSv1.2';
  return (target, callback) => {
    const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
    const origin = `${target.protocol}//${target.host ?? `${target.hostname}:${port}`}`;
    let settled = false;
    const settle = (error: Error | null, socket: Socket | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        socket?.destroy();
        callback(error, null);
      } else callback(null, socket as Socket);
    };
    const timer = setTimeout(() => settle(new DriverError('DRIVER_TIMEOUT', `connecting to ${origin} passed its ${options.timeoutMs} ms deadline`, { url: origin, deadlineMs: options.timeoutMs }), socket), options.timeoutMs);
    let socket: Socket;
    if (target.protocol !== 'https:') {
      socket = netConnect({ host: target.hostname, port });
      socket.once('connect', () => settle(null, socket));
    } else {
      const key = `${target.hostname}:${port}`;
      const secure: TLSSocket = tlsConnect({
        host: target.hostname,
        port,
        // SNI carries names, never addresses.
        ...(isIP(target.hostname) ? {} : { servername: target.servername ?? target.hostname }),
        // The chain is judged below, by the trust the site chose; OpenSSL's own verdict is read there for site CAs.
        rejectUnauthorized: false,
        secureContext: clientContext(options.trust.kind === 'site-ca' ? options.trust.ca : undefined, minVersion),
        ...(sessions.has(key) ? { session: sessions.get(key) } : {}),
        ALPNProtocols: ['http/1.1'],
      });
      socket = secure;
      secure.on('session', (session: Buffer) => {
        sessions.set(key, session);
      });
      secure.once('secureConnect', () => {
        const peer = secure.getPeerX509Certificate();
        const earlier = judged.get(key);
        const presented = peer ? { peer } : secure.isSessionReused() && earlier ? { resumed: earlier.certificate } : undefined;
        const verdict = judgeCertificate(options.trust, presented, {
          hostname: target.hostname,
          origin,
          authorized: secure.authorized,
          ...(secure.authorizationError ? { authorizationError: String(secure.authorizationError) } : {}),
        });
        if (verdict instanceof DriverError) {
          sessions.delete(key);
          judged.delete(key);
          settle(verdict, secure);
          return;
        }
        judged.set(key, verdict);
        options.onTrusted?.(verdict, origin);
        settle(null, secure);
      });
    }
    socket.setNoDelay(true);
    socket.once('error', (error: Error & { code?: string }) => {
      if (target.protocol === 'https:' && versionFailure.test(`${error.code ?? ''} ${error.message}`)) {
        settle(new DriverError('DRIVER_TLS_VERSION', `${origin} speaks no TLS version the site allows (${minVersion} or newer): ${error.message}`, { url: origin, minTlsVersion: minVersion, cause: `${error.code ?? error.name}: ${error.message}`.slice(0, 300) }), socket);
        return;
      }
      settle(toDriverError(error, { url: origin }), socket);
    });
  };
}
