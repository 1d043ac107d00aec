/**
 * How a client trusts a BMC's certificate, and what it decides about the certificate a handshake presented. Real
 * BMCs serve certificates they signed themselves, so a CA cannot vouch for them; the default is to pin the first
 * certificate a BMC presents (trust on first use) and refuse any other until an operator accepts it. A site that runs
 * its own CA names its bundle instead; `insecure` verifies nothing and is an explicit per-site choice.
 *
 * The judgement is made on the connection's `secureConnect`, before undici writes a byte of any request: a refused
 * certificate never receives a credential, a session token or a session POST.
 */
import { createHash, type X509Certificate } from 'node:crypto';
import { checkServerIdentity } from 'node:tls';
import type { CertificateSummary, CertificateTrust } from '../../../events/index.js';
import { DriverError } from '../driver-error.js';

/** Whom a client trusts for a BMC's certificate. */
export type BmcTrust =
  /** The certificate whose SHA-256 fingerprint is `fingerprint`; none yet: the first one presented (pinned then). */
  | { readonly kind: 'pin'; readonly fingerprint: string | undefined; readonly accepted?: boolean }
  /** Certificates a site CA signed, for the BMC's address (PEM bundle). */
  | { readonly kind: 'site-ca'; readonly ca: string }
  /** Anything: no verification. A per-site choice, logged where it is made. */
  | { readonly kind: 'insecure' };

export type TlsMinVersion = 'TLSv1.2' | 'TLSv1.3';

export interface BmcTlsOptions {
  trust: BmcTrust;
  /** The oldest TLS version the site's policy allows (default TLS 1.2; TLS 1.0 and 1.1 are never spoken). */
  minVersion?: TlsMinVersion;
}

/** The public facts of a certificate (never its key): what `BmcCertificateObserved` records. */
export function summarizeCertificate(certificate: X509Certificate): CertificateSummary {
  return {
    fingerprint: certificateFingerprint(certificate.raw),
    subject: certificate.subject.replace(/\n/g, ', ').slice(0, 1000),
    issuer: certificate.issuer.replace(/\n/g, ', ').slice(0, 1000),
    validFrom: instantOf(certificate.validFrom),
    validTo: instantOf(certificate.validTo),
    serial: certificate.serialNumber.toUpperCase().replace(/^0+(?=.)/, '').slice(0, 64),
    selfSigned: certificate.checkIssued(certificate),
  };
}

/** SHA-256 of the DER certificate, lower-case hex. */
export function certificateFingerprint(der: Buffer): string {
  return createHash('sha256').update(der).digest('hex');
}

/** OpenSSL's `Dec  7 18:23:59 2027 GMT` as an ISO instant. */
function instantOf(text: string): string {
  const at = Date.parse(text);
  return Number.isFinite(at) ? new Date(at).toISOString() : new Date(0).toISOString();
}

/** What a handshake's certificate was trusted as, when it was. */
export interface TrustedCertificate {
  certificate: CertificateSummary;
  trust: CertificateTrust;
}

/**
 * What a handshake presented: the certificate, or (a resumed session, which carries no certificate chain) the
 * certificate of the full handshake that made the session, judged then.
 */
export type PresentedCertificate = { readonly peer: X509Certificate } | { readonly resumed: CertificateSummary };

/**
 * Judges the certificate a BMC presented: trusted (and how), or the `DriverError` that stops the connection.
 * `authorized` and `authorizationError` are the TLS socket's own verdict against `ca` (site-CA trust only).
 */
export function judgeCertificate(
  trust: BmcTrust,
  presented: PresentedCertificate | undefined,
  verdict: { hostname: string; origin: string; authorized: boolean; authorizationError?: string },
): TrustedCertificate | DriverError {
  if (!presented) return new DriverError('DRIVER_TLS', `${verdict.origin} presented no certificate`, { url: verdict.origin });
  const peer = 'peer' in presented ? presented.peer : undefined;
  const certificate = peer ? summarizeCertificate(peer) : (presented as { resumed: CertificateSummary }).resumed;
  switch (trust.kind) {
    case 'insecure':
      return { certificate, trust: 'insecure' };
    case 'pin':
      if (trust.fingerprint === undefined) return { certificate, trust: 'first-use' };
      if (trust.fingerprint === certificate.fingerprint) return { certificate, trust: trust.accepted ? 'accepted' : 'first-use' };
      return new DriverError('DRIVER_CERTIFICATE_CHANGED', `${verdict.origin} presented a certificate other than the one pinned for it (${certificate.fingerprint.slice(0, 16)}…, pinned ${trust.fingerprint.slice(0, 16)}…): no credential sent`, {
        url: verdict.origin,
        pinnedFingerprint: trust.fingerprint,
        certificate,
      });
    case 'site-ca': {
      if (!verdict.authorized) {
        return new DriverError('DRIVER_CERTIFICATE_UNTRUSTED', `${verdict.origin} presented a certificate the site CA did not sign (${verdict.authorizationError ?? 'unverified'}): no credential sent`, { url: verdict.origin, certificate, cause: verdict.authorizationError ?? 'unverified' });
      }
      // A resumed session's names were checked at the handshake that made it.
      const mismatch = peer ? checkServerIdentity(verdict.hostname, { subject: { CN: '' }, subjectaltname: peer.subjectAltName ?? '' } as Parameters<typeof checkServerIdentity>[1]) : undefined;
      if (mismatch) return new DriverError('DRIVER_CERTIFICATE_UNTRUSTED', `${verdict.origin} presented a certificate for another name: ${mismatch.message}`, { url: verdict.origin, certificate, cause: mismatch.message });
      return { certificate, trust: 'site-ca' };
    }
    default: {
      const unknown: never = trust;
      return new DriverError('DRIVER_TLS', `unknown trust ${String((unknown as { kind: unknown }).kind)}`);
    }
  }
}
