/**
 * TLS for the KurrentDB face's tests: the KurrentDB clients send credentials only over TLS. Imports neither client
 * nor server, so a test of one client can use it without loading the other's generated protobuf classes.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Role } from '../../../src/api/index.js';
import { principals, tokens } from '../../api/support/api-harness.js';
import { systemTools } from '../../support/system-tool.js';

/** The TLS certificate of these tests is made with openssl (the KurrentDB clients send credentials only over TLS). */
export const openssl = systemTools(['openssl'], 'apt-get install openssl');

/** The test principals and tokens: the API tests' own. */
export { principals, tokens };

export interface TestCertificate {
  dir: string;
  /** The test CA's certificate: what clients trust (`tlsCAFile`). */
  caPath: string;
  /** The server's certificate (signed by the CA, for 127.0.0.1 and localhost) and its key. */
  certPath: string;
  keyPath: string;
  certChain: Buffer;
  privateKey: Buffer;
}

/**
 * A CA and a server certificate it signed, valid for a day. Not one self-signed certificate: the Rust core of
 * `@kurrent/kurrentdb-client` (webpki) refuses a CA certificate used as the server's own.
 */
export function testCertificate(): TestCertificate {
  openssl.require();
  const dir = mkdtempSync(join(tmpdir(), 'fleet-ledger-kurrent-tls-'));
  const path = (name: string) => join(dir, name);
  const run = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  run(['req', '-x509', ...ec, '-days', '1', '-subj', '/CN=fleet-ledger test CA', '-keyout', path('ca-key.pem'), '-out', path('ca.pem')]);
  run(['req', ...ec, '-subj', '/CN=localhost', '-keyout', path('key.pem'), '-out', path('server.csr')]);
  writeFileSync(path('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n');
  run(['x509', '-req', '-in', path('server.csr'), '-CA', path('ca.pem'), '-CAkey', path('ca-key.pem'), '-CAcreateserial', '-days', '1', '-extfile', path('server.ext'), '-out', path('cert.pem')]);
  return { dir, caPath: path('ca.pem'), certPath: path('cert.pem'), keyPath: path('key.pem'), certChain: readFileSync(path('cert.pem')), privateKey: readFileSync(path('key.pem')) };
}

export function tlsConnectionString(port: number, caPath: string, role: Role, scheme = 'esdb'): string {
  return `${scheme}://${encodeURIComponent(principals[role])}:${encodeURIComponent(tokens[role])}@127.0.0.1:${port}?tls=true&tlsCAFile=${encodeURIComponent(caPath)}`;
}

/** A NodeRegistered payload. */
export function registration(nodeId: string, rack = 'r01', site = 'dc1') {
  return { nodeId, site, rack, bmc: { protocol: 'redfish', address: `https://${nodeId}.bmc`, credentialRef: `cred-${nodeId}` }, expectedIntervalS: 60 };
}
