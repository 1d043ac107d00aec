/**
 * Heavy body work off the request thread. `BodyThread` hands bodies to a process of its own (`body-thread.ts`, at a
 * lower CPU priority) and
 * answers with what it made of them; `parseJsonOffThread` is the API's JSON parser: a body under
 * `offThreadFromBytes` is parsed here by fastify's own parser (cheaper than a round trip), a larger one on the thread.
 * Every body is bounded before it gets here (`bodyCaps`): a thread never holds more than a cap.
 *
 * The process is started on first use and again after it ended (a crash fails the requests it held, with
 * `API_INTERNAL`, and no other).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { EbomParse } from '../ebom/index.js';
import { ApiError } from './api-error.js';
import { offThreadFromBytes } from './body-caps.js';
import type { FromBodyThread, ToBodyThread } from './body-thread.js';

type Pending = { resolve: (answer: FromBodyThread) => void; reject: (error: Error) => void };
/** A job as sent, without the id the thread answers to. */
type BodyJob = ToBodyThread extends infer T ? (T extends ToBodyThread ? Omit<T, 'id'> : never) : never;

/** The body process's priority (nice): below the poller's and the API's, so its seconds of parsing wait for theirs. */
const bodyNiceness = 10;

export class BodyThread {
  #worker: ChildProcess | null = null;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #closed = false;

  /**
   * A process, not a thread: a thread shares the process's CPU priority, and on a busy machine 90 s of parsing a 40 MB
   * EBOM at the same priority as the poller's thread took the cores its liveness checks needed (a niced process gives
   * them way).
   */
  #thread(): ChildProcess {
    if (this.#worker) return this.#worker;
    const fromSources = import.meta.url.endsWith('.ts');
    const entry = fileURLToPath(new URL(fromSources ? './body-thread.ts' : './body-thread.js', import.meta.url));
    const worker = fork(entry, [], { serialization: 'advanced', execArgv: fromSources ? ['--import', 'tsx'] : [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    try {
      if (worker.pid !== undefined) setPriority(worker.pid, bodyNiceness);
    } catch {
      // Not allowed here (a container without the capability): it parses at the same priority, still off the API's thread.
    }
    // An idle parser must not keep a process alive that has nothing else to do.
    worker.unref();
    worker.channel?.unref();
    worker.on('message', (answer: FromBodyThread) => {
      const pending = this.#pending.get(answer.id);
      this.#pending.delete(answer.id);
      pending?.resolve(answer);
    });
    const ended = (reason: string): void => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      for (const [id, pending] of this.#pending) {
        this.#pending.delete(id);
        pending.reject(new Error(`the body process ${reason}`));
      }
    };
    worker.on('error', (error) => ended(`failed: ${error.message}`));
    worker.on('exit', (code) => ended(`exited (${code})`));
    this.#worker = worker;
    return worker;
  }

  #ask(job: BodyJob): Promise<FromBodyThread> {
    if (this.#closed) return Promise.reject(new Error('the body process is closed'));
    const id = this.#nextId++;
    const worker = this.#thread();
    return new Promise<FromBodyThread>((resolve, reject) => {
      // A job waits only while it runs: the process keeps its parent alive exactly as long as someone waits on it.
      worker.channel?.ref();
      const settle = (): void => {
        if (this.#pending.size === 0) worker.channel?.unref();
      };
      this.#pending.set(id, {
        resolve: (answer) => {
          settle();
          resolve(answer);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      worker.send({ id, ...job } as ToBodyThread, (error) => {
        if (error) this.#pending.get(id)?.reject(error);
      });
    });
  }

  /** Parses a JSON body; refuses it (`API_INVALID_REQUEST`, field `body`) as the request thread's parser would. */
  async parseJson(body: Buffer): Promise<unknown> {
    const answer = await this.#ask({ kind: 'json', bytes: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) });
    switch (answer.kind) {
      case 'json':
        return answer.value;
      case 'json-refused':
        throw new ApiError('API_INVALID_REQUEST', { field: 'body', reason: answer.reason }, `body ${answer.reason}`);
      case 'json-unstorable': {
        // Worded as the API's door words it (`build-api.ts`), whichever thread found it.
        const field = answer.path ? `body.${answer.path}` : 'body';
        throw new ApiError('API_INVALID_REQUEST', { field, reason: answer.reason }, `${field} ${answer.reason}`);
      }      default:
        throw new Error(answer.kind === 'failed' ? answer.error : `unexpected answer ${answer.kind}`);
    }
  }

  /** Reads an EBOM file and validates every row: the same verdict as `parseEbom`, and the file's SHA-256. */
  async parseEbom(text: string, format: 'csv' | 'json'): Promise<{ parse: EbomParse; sha256: string }> {
    const answer = await this.#ask({ kind: 'ebom', text, format });
    if (answer.kind === 'ebom') return { parse: answer.parse, sha256: answer.sha256 };
    throw new Error(answer.kind === 'failed' ? answer.error : `unexpected answer ${answer.kind}`);
  }

  /** Ends the process; what it held is failed. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    if (!worker || worker.exitCode !== null || worker.signalCode !== null) return;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill();
    await exited;
  }
}

/**
 * Makes `app` parse JSON bodies of `offThreadFromBytes` or more on `bodies`' thread; smaller ones keep fastify's own
 * parser (which refuses the same prototype keys), on the request thread.
 */
export function parseJsonOffThread(app: FastifyInstance, bodies: BodyThread): void {
  const inline = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    if (body.byteLength < offThreadFromBytes) {
      inline(request, body.toString('utf8'), done);
      return;
    }
    bodies.parseJson(body).then(
      (value) => done(null, value),
      (error: Error) => done(error),
    );
  });
}
