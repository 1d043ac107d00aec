/**
 * Heavy body work off the request thread. `BodyThread` hands bodies to a thread of its own (`body-thread.ts`) and
 * answers with what it made of them; `parseJsonOffThread` is the API's JSON parser: a body under
 * `offThreadFromBytes` is parsed here by fastify's own parser (cheaper than a round trip), a larger one on the thread.
 * Every body is bounded before it gets here (`bodyCaps`): a thread never holds more than a cap.
 *
 * The thread is started on first use and again after it ended (a crash fails the requests it held, with
 * `API_INTERNAL`, and no other).
 */
import type { Worker } from 'node:worker_threads';
import type { FastifyInstance } from 'fastify';
import type { EbomParse } from '../ebom/index.js';
import { startThread } from '../thread.js';
import { ApiError } from './api-error.js';
import { offThreadFromBytes } from './body-caps.js';
import type { FromBodyThread, ToBodyThread } from './body-thread.js';

type Pending = { resolve: (answer: FromBodyThread) => void; reject: (error: Error) => void };
/** A job as sent, without the id the thread answers to. */
type BodyJob = ToBodyThread extends infer T ? (T extends ToBodyThread ? Omit<T, 'id'> : never) : never;

export class BodyThread {
  #worker: Worker | null = null;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #closed = false;

  #thread(): Worker {
    if (this.#worker) return this.#worker;
    const worker = startThread(new URL('./body-thread.ts', import.meta.url), null);
    // An idle parser thread must not keep a process alive that has nothing else to do.
    worker.unref();
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
        pending.reject(new Error(`the body thread ${reason}`));
      }
    };
    worker.on('error', (error) => ended(`failed: ${error.message}`));
    worker.on('exit', (code) => ended(`exited (${code})`));
    this.#worker = worker;
    return worker;
  }

  #ask(job: BodyJob, transfer: ArrayBuffer[] = []): Promise<FromBodyThread> {
    if (this.#closed) return Promise.reject(new Error('the body thread is closed'));
    const id = this.#nextId++;
    const worker = this.#thread();
    return new Promise<FromBodyThread>((resolve, reject) => {
      // A job waits only while it runs: the thread keeps the process alive exactly as long as someone waits on it.
      worker.ref();
      const settle = (): void => {
        if (this.#pending.size === 0) worker.unref();
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
      worker.postMessage({ id, ...job } as ToBodyThread, transfer);
    });
  }

  /** Parses a JSON body; refuses it (`API_INVALID_REQUEST`, field `body`) as the request thread's parser would. */
  async parseJson(body: Buffer): Promise<unknown> {
    // The bytes are handed over, not copied, when the body owns its memory (bodies this large always do).
    const owned = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer;
    const bytes = owned ? new Uint8Array(body.buffer as ArrayBuffer) : new Uint8Array(body);
    const answer = await this.#ask({ kind: 'json', bytes }, [bytes.buffer as ArrayBuffer]);
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

  /** Ends the thread; what it held is failed. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    if (worker) await worker.terminate();
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
