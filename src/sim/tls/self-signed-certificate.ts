/**
 * X.509 certificates made in-process, as a BMC makes its own at first boot: an ECDSA P-256 key, a v3 certificate
 * with a serial of its own, signed by itself (or, for a site that runs a CA, by that CA). No openssl process: the DER
 * is written here and signed with `node:crypto`, about a tenth of a millisecond per certificate (README of the
 * simulator, "HTTPS"), so a fleet of 25,000 BMCs gets its certificates as it is first contacted.
 *
 * Only what a TLS client reads is written: version, serial, issuer, validity, subject, key, subjectAltName (the
 * BMC's address) and, for a CA, basicConstraints. Keys never leave the simulator.
 */
import { createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

/** One DER element: tag, length, content. */
function der(tag: number, content: Buffer): Buffer {
  const length = content.length;
  let header: Buffer;
  if (length < 0x80) header = Buffer.from([tag, length]);
  else if (length < 0x100) header = Buffer.from([tag, 0x81, length]);
  else if (length < 0x10000) header = Buffer.from([tag, 0x82, length >> 8, length & 0xff]);
  else header = Buffer.from([tag, 0x83, length >> 16, (length >> 8) & 0xff, length & 0xff]);
  return Buffer.concat([header, content]);
}

const sequence = (...items: Buffer[]): Buffer => der(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => der(0x31, Buffer.concat(items));
const utf8 = (text: string): Buffer => der(0x0c, Buffer.from(text, 'utf8'));
const octets = (content: Buffer): Buffer => der(0x04, content);
const explicit = (index: number, content: Buffer): Buffer => der(0xa0 + index, content);

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const bytes: number[] = [(parts[0] ?? 0) * 40 + (parts[1] ?? 0)];
  for (const part of parts.slice(2)) {
    const chunk: number[] = [part & 0x7f];
    for (let rest = part >>> 7; rest > 0; rest >>>= 7) chunk.unshift((rest & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}

/** A positive INTEGER from big-endian bytes (a leading zero when the top bit is set). */
function integer(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start += 1;
  const trimmed = bytes.subarray(start);
  return der(0x02, (trimmed[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(at: Date): Buffer {
  const iso = at.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return at.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(`${iso.slice(2)}Z`)) : der(0x18, Buffer.from(`${iso}Z`));
}

/** A distinguished name of common name and organization, in that order. */
function name(commonName: string, organization?: string): Buffer {
  const attributes = [set(sequence(oid('2.5.4.3'), utf8(commonName)))];
  if (organization) attributes.push(set(sequence(oid('2.5.4.10'), utf8(organization))));
  return sequence(...attributes);
}

function ipBytes(address: string): Buffer {
  if (isIP(address) === 4) return Buffer.from(address.split('.').map(Number));
  throw new RangeError(`not an IPv4 address: ${address}`);
}

const ecdsaWithSha256 = sequence(oid('1.2.840.10045.4.3.2'));

export interface CertificateSubject {
  commonName: string;
  organization?: string;
}

export interface CertificateRequest {
  subject: CertificateSubject;
  /** Big-endian serial bytes (at most 20); the BMC's own. */
  serial: Buffer;
  notBefore: Date;
  notAfter: Date;
  /** The addresses and names the certificate is for (subjectAltName): IPv4 addresses or DNS names. */
  altNames?: readonly string[];
  /** The key the certificate certifies. */
  key: KeyObject;
  /** Who signs: omitted for a self-signed certificate (the key signs itself). */
  issuer?: { subject: CertificateSubject; key: KeyObject };
  /** A CA certificate (basicConstraints CA:TRUE). */
  ca?: boolean;
}

export interface IssuedCertificate {
  /** The certificate in DER. */
  der: Buffer;
  /** The certificate in PEM, for `tls.createSecureContext`. */
  pem: string;
  /** The private key in PEM (the simulator's own; never logged, never recorded). */
  keyPem: string;
}

/** Makes a certificate for `request.key`, signed by the issuer's key or its own. */
export function issueCertificate(request: CertificateRequest): IssuedCertificate {
  const publicKey = request.key.type === 'private' ? createPublicKey(request.key) : request.key;
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const extensions: Buffer[] = [];
  if (request.altNames && request.altNames.length > 0) {
    const names = request.altNames.map((entry) => (isIP(entry) ? der(0x87, ipBytes(entry)) : der(0x82, Buffer.from(entry, 'ascii'))));
    extensions.push(sequence(oid('2.5.29.17'), octets(sequence(...names))));
  }
  if (request.ca) extensions.push(sequence(oid('2.5.29.19'), der(0x01, Buffer.from([0xff])), octets(sequence(der(0x01, Buffer.from([0xff]))))));
  const issuerSubject = request.issuer?.subject ?? request.subject;
  const tbs = sequence(
    explicit(0, der(0x02, Buffer.from([2]))),
    integer(request.serial),
    ecdsaWithSha256,
    name(issuerSubject.commonName, issuerSubject.organization),
    sequence(time(request.notBefore), time(request.notAfter)),
    name(request.subject.commonName, request.subject.organization),
    spki,
    ...(extensions.length > 0 ? [explicit(3, sequence(...extensions))] : []),
  );
  const signature = sign('sha256', tbs, { key: request.issuer?.key ?? request.key, dsaEncoding: 'der' });
  const certificate = sequence(tbs, ecdsaWithSha256, der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const base64 = certificate.toString('base64').replace(/.{64}/g, '$&\n');
  return {
    der: certificate,
    pem: `-----BEGIN CERTIFICATE-----\n${base64}${base64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`,
    keyPem: request.key.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** A fresh ECDSA P-256 key: what current BMC firmware generates (older firmware used RSA 2048; not modelled). */
export function newBmcKey(): KeyObject {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
}
