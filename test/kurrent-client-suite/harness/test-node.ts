/**
 * What the official client's suite calls a test node (or cluster): here, fleet-ledger's KurrentDB face in this process
 * over a fresh ledger database on the run's embedded PostgreSQL, instead of a KurrentDB container. TLS with a test CA
 * (made with openssl, `test/kurrent/support/tls-certificate.ts`), or plaintext for the suite's "insecure" nodes.
 *
 * The suite logs in as `admin` / `changeit` (KurrentDB's default credentials): this harness gives the face a token
 * table with that one principal, role `admin`. The append limit is KurrentDB's default (1 MiB) unless
 * `setOption('EVENTSTORE_MAX_APPEND_SIZE', n)` sets it; other KurrentDB options mean nothing to the face and are ignored. A "cluster" of n nodes is n faces over the
 * same ledger (each reports itself as the one member in Gossip).
 */
import { readFileSync, rmSync } from 'node:fs';
import { inject } from 'vitest';
import { TokenTable } from '../../../src/api/index.js';
import { EventStore } from '../../../src/ledger/index.js';
import { serveKurrent, type KurrentServer } from '../../../src/kurrent/index.js';
import { freshDatabase } from '../../support/backends.js';
import { testCertificate, type TestCertificate } from '../../kurrent/support/tls-certificate.js';

/** KurrentDB's `MaxAppendSize` default: the limit of a node the suite starts without setting its own. */
const kurrentDefaultMaxAppendSize = 1024 * 1024;

/** The credentials every file of the suite uses: KurrentDB's default admin. */
export const suitePrincipal = { username: 'admin', password: 'changeit' } as const;

export interface EndPoint {
  address: string;
  port: number;
}

interface Certificate {
  userCertFile: Buffer;
  userKeyFile: Buffer;
}

export class TestNode {
  readonly #count: number;
  readonly #insecure: boolean;
  readonly #options = new Map<string, string>();
  #database: { url: string; drop: () => Promise<void> } | null = null;
  #store: EventStore | null = null;
  #certificate: TestCertificate | null = null;
  #servers: Array<KurrentServer | null> = [];
  #ports: number[] = [];

  constructor(count = 1, insecure = false) {
    this.#count = count;
    this.#insecure = insecure;
  }

  /** A KurrentDB server option (`EVENTSTORE_*`); only the append size limit means something to the face. */
  setOption(key: string, value: unknown): this {
    this.#options.set(key, String(value));
    return this;
  }

  /** KurrentDB's log levels: the face logs nothing here, so there is nothing to set. */
  setLogLevel(): this {
    return this;
  }

  get domain(): string {
    return '127.0.0.1';
  }

  get uri(): string {
    return `${this.domain}:${this.#ports[0]}`;
  }

  get endpoints(): EndPoint[] {
    return this.#ports.map((port) => ({ address: this.domain, port }));
  }

  get certPath(): { root: string; admin: { certPath: string; certKeyPath: string }; invalid: { certPath: string; certKeyPath: string } } {
    if (this.#insecure || !this.#certificate) throw new Error('No Cert for insecure cluster');
    // User certificates (KurrentDB's user-certificates plugin) are not served: the face knows principals by token.
    const none = { certPath: '', certKeyPath: '' };
    return { root: this.#certificate.caPath, admin: none, invalid: none };
  }

  get certs(): { root: Buffer; users: { admin: Certificate; invalid: Certificate } } {
    if (this.#insecure || !this.#certificate) throw new Error('No Cert for insecure cluster');
    const none = { userCertFile: Buffer.alloc(0), userKeyFile: Buffer.alloc(0) };
    return { root: readFileSync(this.#certificate.caPath), users: { admin: none, invalid: none } };
  }

  /** The ledger under the faces (for the harness's own checks). */
  get store(): EventStore {
    if (!this.#store) throw new Error('the node is not up');
    return this.#store;
  }

  async up(): Promise<void> {
    this.#database = await freshDatabase(inject('embeddedAdminUrl'));
    this.#store = await EventStore.open({ connectionString: this.#database.url, pollIntervalMs: 200 });
    if (!this.#insecure) this.#certificate = testCertificate();
    this.#ports = Array.from({ length: this.#count }, () => 0);
    this.#servers = [];
    for (let index = 0; index < this.#count; index += 1) this.#servers.push(await this.#start(0));
    this.#ports = this.#servers.map((server) => server!.port);
  }

  async #start(port: number): Promise<KurrentServer> {
    // KurrentDB's default append limit (1 MiB: the suite's size test relies on it) unless the test sets its own.
    const maxAppendSize = this.#options.get('EVENTSTORE_MAX_APPEND_SIZE') ?? String(kurrentDefaultMaxAppendSize);
    return serveKurrent({
      store: this.store,
      tokens: new TokenTable([{ token: suitePrincipal.password, principal: suitePrincipal.username, role: 'admin' }]),
      port,
      ...(this.#certificate ? { tls: { certChain: this.#certificate.certChain, privateKey: this.#certificate.privateKey } } : {}),
      maxAppendBytes: Number(maxAppendSize),
    });
  }

  /** Stops the face at `endpoint` at once, as a killed node stops (its calls are cut); the ledger stays. */
  async killNode(endpoint: EndPoint): Promise<void> {
    const index = this.#ports.indexOf(endpoint.port);
    if (index < 0) throw new Error(`unknown node ${endpoint.address}:${endpoint.port}`);
    const server = this.#servers[index];
    this.#servers[index] = null;
    await server?.close(0);
  }

  /** Starts again every face that was killed, on its port. */
  async resurrect(): Promise<void> {
    for (let index = 0; index < this.#servers.length; index += 1) {
      if (this.#servers[index] === null) this.#servers[index] = await this.#start(this.#ports[index]!);
    }
  }

  async down(): Promise<void> {
    await Promise.all(this.#servers.map((server) => server?.close()));
    this.#servers = [];
    await this.#store?.close();
    this.#store = null;
    await this.#database?.drop();
    this.#database = null;
    if (this.#certificate) rmSync(this.#certificate.dir, { recursive: true, force: true });
  }

  /** KurrentDB's container logs and web UI: there are none here. */
  async enableNodeLogs(): Promise<void> {}
  async inspect(): Promise<void> {}
  async openInBrowser(): Promise<void> {}
}
