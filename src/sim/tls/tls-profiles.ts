/**
 * How each BMC generation speaks TLS: the versions and ciphers it offers, how long its handshake takes (a small ARM
 * core doing ECDHE and ECDSA), whether it resumes TLS sessions, and how long it keeps an idle connection open. Keyed
 * by the vendor profile (or capture) name; our own data, written from vendors' release notes and what their web
 * servers answer (an iDRAC 8 or iLO 4 offers TLS 1.2 and nothing newer; iDRAC 9 and iLO 5 from 2020 firmware on
 * offer TLS 1.3).
 */
export type TlsVersion = 'TLSv1.2' | 'TLSv1.3';

export interface BmcTlsProfile {
  minVersion: TlsVersion;
  maxVersion: TlsVersion;
  /** OpenSSL cipher list for TLS 1.2 (TLS 1.3 suites are left at OpenSSL's defaults). */
  ciphers?: string;
  /** Added before the handshake starts, before the latency scale. */
  handshakeLatencyMs: number;
  /** False: no session tickets and no session cache, so every connection is a full handshake. */
  sessionResumption: boolean;
  /** How long an idle kept-alive connection stays open; 0 closes the connection after each answer. */
  keepAliveTimeoutMs: number;
  /** Connections served at once; more are closed at accept (embedded web servers have a small fixed pool). */
  connectionLimit: number;
}

/** Embedded web servers of the 2014 to 2017 generations: TLS 1.2 only, AES-GCM and CBC with ECDHE, slow handshakes. */
const legacyCiphers = 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES256-SHA';

const modern: BmcTlsProfile = { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.3', handshakeLatencyMs: 25, sessionResumption: true, keepAliveTimeoutMs: 120_000, connectionLimit: 32 };

const byProfile: Record<string, BmcTlsProfile> = {
  // iDRAC 8: TLS 1.2 only; every connection a full handshake (no tickets, no cache); keeps idle connections 5 s.
  dell_idrac8_m630: { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2', ciphers: legacyCiphers, handshakeLatencyMs: 120, sessionResumption: false, keepAliveTimeoutMs: 5_000, connectionLimit: 8 },
  // iLO 4: TLS 1.2 only, resumes sessions, but closes a connection after each answer.
  hpe_ilo4_bl460c_gen9: { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2', ciphers: legacyCiphers, handshakeLatencyMs: 250, sessionResumption: true, keepAliveTimeoutMs: 0, connectionLimit: 8 },
  supermicro_x10dff: { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2', ciphers: legacyCiphers, handshakeLatencyMs: 80, sessionResumption: false, keepAliveTimeoutMs: 0, connectionLimit: 4 },
  intel_s2600bpb: { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2', ciphers: legacyCiphers, handshakeLatencyMs: 60, sessionResumption: true, keepAliveTimeoutMs: 10_000, connectionLimit: 8 },
  gigabyte_ami: { ...modern, handshakeLatencyMs: 40, keepAliveTimeoutMs: 60_000 },
};

/** The TLS behaviour of a vendor profile or capture; a name not listed gets a current BMC's. */
export function tlsProfileOf(name: string): BmcTlsProfile {
  return byProfile[name] ?? modern;
}
