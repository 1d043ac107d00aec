/**
 * What the official client's suite calls a test node (or cluster): here, fleet-ledger's KurrentDB face in a worker
 * thread of the test's process (`node-worker.ts`: its own event loop, as a KurrentDB node is a process of its own) over
 * a fresh ledger database on the run's embedded PostgreSQL, instead of a KurrentDB container. TLS with a test CA
 * (made with openssl, `test/kurrent/support/tls-certificate.ts`), or plaintext for the suite's "insecure" nodes.
 *
 * The suite logs in as `admin` / `changeit` (KurrentDB's default credentials): this harness gives the face a token
 * table with that one principal, role `admin`. The append limit is KurrentDB's default (1 MiB) unless
 * `setOption('EVENTSTORE_MAX_APPEND_SIZE', n)` sets it; other KurrentDB options mean nothing to the face and are ignored. A "cluster" of n nodes is n faces over the
 * same ledger (each reports itself as the one member in Gossip).
 */
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { inject } from 'vitest';
import { EventStore } from '../../../src/ledger/index.js';
import { freshDatabase } from '../../support/backends.js';
import { testCertificate, type TestCertificate } from '../../kurrent/support/tls-certificate.js';
import type { NodeWorkerAnswer, NodeWorkerData } from './node-worker.js';

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

/** A face served by the nodes' worker thread (`node-worker.ts`), by its id there. */
interface RunningFace {
  id: number;
  port: number;
}

/**
 * The worker's entry: registers tsx in the worker (loader hooks given to the test's process do not reach its workers)
 * and imports `node-worker.ts`.
 */
const workerEntry = new URL(
  `data:text/javascript,${encodeURIComponent(
    `import { register } from ${JSON.stringify(pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/index\.cjs$/, 'index.mjs')).href)};` +
      `register(); await import(${JSON.stringify(new URL('./node-worker.ts', import.meta.url).href)});`,
  )}`,
);

/** The nodes' worker thread of this test worker, started at the first node and kept for every later file's. */
let host: { worker: Worker; next: number; waiting: Map<number, (answer: NodeWorkerAnswer) => void> } | null = null;

type Request = { start: NodeWorkerData } | { stop: number; face: number };

function ask(request: Request): Promise<NodeWorkerAnswer> {
  if (!host) {
    const worker = new Worker(workerEntry);
    // It must not keep the test worker alive once its files are done.
    worker.unref();
    const waiting = new Map<number, (answer: NodeWorkerAnswer) => void>();
    worker.on('message', (answer: NodeWorkerAnswer) => {
      waiting.get(answer.id)?.(answer);
      waiting.delete(answer.id);
    });
    worker.on('error', (error) => {
      for (const resolve of waiting.values()) resolve({ id: -1, error: String(error) });
      waiting.clear();
      host = null;
    });
    host = { worker, next: 1, waiting };
  }
  const current = host;
  const id = current.next++;
  return new Promise<NodeWorkerAnswer>((resolve) => {
    current.waiting.set(id, resolve);
    current.worker.postMessage({ id, ...request });
  });
}

export class TestNode {
  readonly #count: number;
  readonly #insecure: boolean;
  readonly #options = new Map<string, string>();
  #database: { url: string; drop: () => Promise<void> } | null = null;
  #certificate: TestCertificate | null = null;
  #faces: Array<RunningFace | null> = [];
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

  async up(): Promise<void> {
    this.#database = await freshDatabase(inject('embeddedAdminUrl'));
    // Migrated once, here, before the faces (each opens the store without racing the others to migrate it).
    await (await EventStore.open({ connectionString: this.#database.url })).close();
    if (!this.#insecure) this.#certificate = testCertificate();
    this.#faces = await Promise.all(Array.from({ length: this.#count }, () => this.#start(0)));
    this.#ports = this.#faces.map((face) => face!.port);
  }

  async #start(port: number): Promise<RunningFace> {
    // KurrentDB's default append limit (1 MiB: the suite's size test relies on it) unless the test sets its own.
    const maxAppendBytes = Number(this.#options.get('EVENTSTORE_MAX_APPEND_SIZE') ?? kurrentDefaultMaxAppendSize);
    const data: NodeWorkerData = {
      databaseUrl: this.#database!.url,
      port,
      tls: this.#certificate ? { certPath: this.#certificate.certPath, keyPath: this.#certificate.keyPath } : null,
      maxAppendBytes,
      principal: suitePrincipal,
    };
    const answer = await ask({ start: data });
    if (answer.port === undefined) throw new Error(`the face did not start: ${answer.error ?? 'no answer'}`);
    return { id: answer.id, port: answer.port };
  }

  /** Stops the face at `endpoint` at once, as a stopped container's node stops: its calls are cancelled, it closes. */
  async killNode(endpoint: EndPoint): Promise<void> {
    const index = this.#ports.indexOf(endpoint.port);
    if (index < 0) throw new Error(`unknown node ${endpoint.address}:${endpoint.port}`);
    const face = this.#faces[index];
    this.#faces[index] = null;
    if (face) await this.#stop(face, 0);
  }

  /** Closes a face: calls still open after `graceMs` are cut. */
  async #stop(face: RunningFace, graceMs: number): Promise<void> {
    await ask({ stop: graceMs, face: face.id });
  }

  /** Starts again every face that was killed, on its port. */
  async resurrect(): Promise<void> {
    for (let index = 0; index < this.#faces.length; index += 1) {
      if (this.#faces[index] === null) this.#faces[index] = await this.#start(this.#ports[index]!);
    }
  }

  async down(): Promise<void> {
    await Promise.all(this.#faces.map((face) => face && this.#stop(face, 500)));
    this.#faces = [];
    await this.#database?.drop();
    this.#database = null;
    if (this.#certificate) rmSync(this.#certificate.dir, { recursive: true, force: true });
  }

  /** KurrentDB's container logs and web UI: there are none here. */
  async enableNodeLogs(): Promise<void> {}
  async inspect(): Promise<void> {}
  async openInBrowser(): Promise<void> {}
}
