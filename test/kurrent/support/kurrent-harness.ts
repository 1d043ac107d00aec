/**
 * The KurrentDB face over a fresh ledger database (embedded PostgreSQL), with the API's test tokens, and clients of
 * `@eventstore/db-client` for each role. TLS (the only way a KurrentDB client sends credentials) uses a self-signed
 * certificate for 127.0.0.1 made with the openssl command for this run.
 */
import { rmSync } from 'node:fs';
import { EventStoreDBClient } from '@eventstore/db-client';
import { inject } from 'vitest';
import type { AnonymousReads, Role } from '../../../src/api/index.js';
import { EventStore } from '../../../src/ledger/index.js';
import { serveKurrent, type KurrentServer } from '../../../src/kurrent/index.js';
import { tokenTable } from '../../api/support/api-harness.js';
import { freshDatabase } from '../../support/backends.js';
import { openssl, principals, registration, testCertificate, tlsConnectionString, tokens, type TestCertificate } from './tls-certificate.js';


export { openssl, principals, registration, testCertificate, tlsConnectionString, tokens, type TestCertificate };

export interface KurrentHarness {
  store: EventStore;
  server: KurrentServer;
  certificate: TestCertificate;
  /** A client over TLS with the role's principal and token as username and password. */
  client(role: Role): EventStoreDBClient;
  /** A client on a plaintext face (no credentials reach the server) that shows anonymous callers envelopes. */
  plaintextClient(options?: { anonymousReads?: AnonymousReads }): Promise<EventStoreDBClient>;
  /** The port of the last plaintext face. */
  plaintextPort(): number;
  /** Stops the gRPC face and starts it again on the same port over the same database. */
  restart(): Promise<void>;
  close(): Promise<void>;
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
    async plaintextClient(options = {}) {
      const face = await serveKurrent({ store, tokens: tokenTable, port: 0, anonymousReads: options.anonymousReads ?? 'envelopes' });
      plaintext.push(face);
      const client = EventStoreDBClient.connectionString(`esdb://127.0.0.1:${face.port}?tls=false`);
      clients.push(client);
      return client;
    },
    plaintextPort() {
      return plaintext[plaintext.length - 1]!.port;
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

