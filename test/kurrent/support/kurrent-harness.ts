/**
 * The KurrentDB face over a fresh ledger database (embedded PostgreSQL), with the API's test tokens, and clients of
 * `@eventstore/db-client` for each role. TLS (the only way a KurrentDB client sends credentials) uses a self-signed
 * certificate for 127.0.0.1 made with the openssl command for this run.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventStoreDBClient } from '@eventstore/db-client';
import { inject } from 'vitest';
import type { Role } from '../../../src/api/index.js';
import { EventStore } from '../../../src/ledger/index.js';
import { serveKurrent, type KurrentServer } from '../../../src/kurrent/index.js';
import { principals, tokenTable, tokens } from '../../api/support/api-harness.js';
import { freshDatabase } from '../../support/backends.js';
import { systemTools } from '../../support/system-tool.js';

/** The TLS certificate of these tests is made with openssl (the KurrentDB clients send credentials only over TLS). */
export const openssl = systemTools(['openssl'], 'apt-get install openssl');

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

export interface KurrentHarness {
  store: EventStore;
  server: KurrentServer;
  certificate: TestCertificate;
  /** A client over TLS with the role's principal and token as username and password. */
  client(role: Role): EventStoreDBClient;
  /** A client on a plaintext face (no credentials reach the server). */
  plaintextClient(): Promise<EventStoreDBClient>;
  /** Stops the gRPC face and starts it again on the same port over the same database. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export function tlsConnectionString(port: number, caPath: string, role: Role, scheme = 'esdb'): string {
  return `${scheme}://${encodeURIComponent(principals[role])}:${encodeURIComponent(tokens[role])}@127.0.0.1:${port}?tls=true&tlsCAFile=${encodeURIComponent(caPath)}`;
}

export async function openKurrentHarness(): Promise<KurrentHarness> {
  const database = await freshDatabase(inject('embeddedAdminUrl'));
  let store = await EventStore.open({ connectionString: database.url, pollIntervalMs: 200 });
  const certificate = testCertificate();
  const start = (port: number) => serveKurrent({ store, tokens: tokenTable, port, tls: { certChain: certificate.certChain, privateKey: certificate.privateKey } });
  let server = await start(0);
  const clients: EventStoreDBClient[] = [];
  const plaintext: KurrentServer[] = [];
  const harness: KurrentHarness = {
    get store() {
      return store;
    },
    get server() {
      return server;
    },
    certificate,
    client(role) {
      const client = EventStoreDBClient.connectionString(tlsConnectionString(server.port, certificate.caPath, role));
      clients.push(client);
      return client;
    },
    async plaintextClient() {
      const face = await serveKurrent({ store, tokens: tokenTable, port: 0, anonymous: { id: 'kurrent-anonymous', role: 'analyst' } });
      plaintext.push(face);
      const client = EventStoreDBClient.connectionString(`esdb://127.0.0.1:${face.port}?tls=false`);
      clients.push(client);
      return client;
    },
    async restart() {
      const { port } = server;
      await server.close();
      await store.close();
      store = await EventStore.open({ connectionString: database.url, pollIntervalMs: 200 });
      server = await start(port);
    },
    async close() {
      await Promise.all(clients.map((client) => client.dispose().catch(() => undefined)));
      await Promise.all(plaintext.map((face) => face.close()));
      await server.close();
      await store.close();
      await database.drop();
      rmSync(certificate.dir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** A NodeRegistered payload. */
export function registration(nodeId: string, rack = 'r01', site = 'dc1') {
  return { nodeId, site, rack, bmc: { protocol: 'redfish', address: `https://${nodeId}.bmc`, credentialRef: `cred-${nodeId}` }, expectedIntervalS: 60 };
}
