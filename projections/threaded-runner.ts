/**
 * The fleet's projections applied on a thread of their own (`projection-thread.ts`), the way `fleet-ledger start`
 * runs them: the same `ProjectionRunner`, its guarantees unchanged (exactly once, one live instance per projection by
 * an advisory lock, an event it cannot apply set aside or stopping it), but its round trips wait on an event loop
 * the poller does not share. At 25,000 BMCs on two cores the main thread's loop answered 160 ms late at p99 and
 * every batch waited for it about eight times (see the README's benchmark).
 *
 * A thread that ends unexpectedly is started again (after 1 s, doubling to at most 30 s): the projections resume
 * from their checkpoints, as after a restart of the process.
 */
import type { Worker } from 'node:worker_threads';
import type { ProjectionRunnerOptions, ProjectionStatus } from '../src/ledger/index.js';
import { startThread } from '../src/thread.js';
import type { FleetProjectionOptions } from './index.js';
import type { FromProjectionThread, ProjectionThreadData, ToProjectionThread } from './projection-thread.js';
import { assertNever } from '../events/index.js';

export interface ThreadedProjectionRunnerOptions extends Pick<ProjectionRunnerOptions, 'batchSize' | 'standbyRetryMs' | 'onFailure' | 'maxHeldRows' | 'log' | 'onApplied'> {
  connectionString: string;
  /** Connections of the thread's own pool (default 8). */
  poolSize?: number;
  projections?: FleetProjectionOptions;
}

/** How long a request to the thread (status, clear a failure) may take before it is answered with an error. */
const requestBoundMs = 15_000;
/** How long a stop waits for the thread to stop its projections before it is ended (their locks go with it). */
const stopBoundMs = 30_000;

export class ThreadedProjectionRunner {
  readonly #options: ThreadedProjectionRunnerOptions;
  #worker: Worker | null = null;
  readonly #pending = new Map<number, { resolve: (status: ProjectionStatus[]) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  #nextId = 1;
  /** The last status the thread gave: answered (as `starting`) while a thread that ended is being replaced. */
  #lastStatus: ProjectionStatus[] = [];
  #stopping: Promise<void> | null = null;
  #restartTimer: NodeJS.Timeout | null = null;
  #restarts = 0;

  constructor(options: ThreadedProjectionRunnerOptions) {
    this.#options = options;
  }

  /** Starts the thread; resolves once every projection has its tables and is running (or standing by). */
  start(): Promise<void> {
    return this.#spawn();
  }

  #spawn(): Promise<void> {
    const { connectionString, poolSize, projections, log, onApplied, ...runner } = this.#options;
    const data: ProjectionThreadData = { connectionString, poolSize: poolSize ?? 8, projections: projections ?? {}, runner, reportApplied: onApplied !== undefined };
    const worker = startThread(new URL('./projection-thread.ts', import.meta.url), data);
    this.#worker = worker;
    return new Promise<void>((resolve, reject) => {
      let started = false;
      worker.on('message', (message: FromProjectionThread) => {
        switch (message.kind) {
          case 'started':
            started = true;
            this.#restarts = 0;
            resolve();
            return;
          case 'failed':
            reject(new Error(`projections did not start: ${message.error}`));
            void worker.terminate();
            return;
          case 'log':
            log?.(message.message, message.fields);
            return;
          case 'applied':
            onApplied?.(message.projection, new Date(message.oldestRecordedAt), message.events, new Date(message.appliedAt));
            return;
          case 'answer': {
            const pending = this.#pending.get(message.id);
            if (!pending) return;
            this.#pending.delete(message.id);
            clearTimeout(pending.timer);
            if (message.error !== undefined) pending.reject(new Error(message.error));
            else pending.resolve(message.status ?? []);
            return;
          }
          case 'stopped':
            return;
          default:
            assertNever(message, 'message from the projection thread');
        }
      });
      worker.on('error', (error) => log?.('the projection thread failed', { error: String(error) }));
      worker.on('exit', (code) => {
        if (this.#worker === worker) this.#worker = null;
        for (const [id, pending] of this.#pending) {
          clearTimeout(pending.timer);
          pending.reject(new Error('the projection thread ended'));
          this.#pending.delete(id);
        }
        if (!started) {
          reject(new Error(`the projection thread ended before its projections started (exit code ${code})`));
          return;
        }
        if (this.#stopping) return;
        const delayMs = Math.min(30_000, 1000 * 2 ** Math.min(this.#restarts, 5));
        this.#restarts += 1;
        log?.('the projection thread ended unexpectedly: started again; projections resume from their checkpoints', { exitCode: code, inMs: delayMs });
        this.#restartTimer = setTimeout(() => this.#restart(), delayMs);
      });
    });
  }

  #restart(): void {
    this.#restartTimer = null;
    if (this.#stopping) return;
    this.#spawn().catch((error: unknown) => {
      // The thread's 'exit' handler does not restart a thread that never started: this one does, later.
      if (this.#stopping) return;
      const delayMs = Math.min(30_000, 1000 * 2 ** Math.min(this.#restarts, 5));
      this.#restarts += 1;
      this.#options.log?.('the projection thread could not start again: retried', { error: String(error), inMs: delayMs });
      this.#restartTimer = setTimeout(() => this.#restart(), delayMs);
    });
  }

  #request(message: ToProjectionThread & { id: number }): Promise<ProjectionStatus[]> {
    const worker = this.#worker;
    if (!worker) return Promise.reject(new Error('the projection thread is not running'));
    return new Promise<ProjectionStatus[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(message.id);
        reject(new Error(`the projection thread did not answer within ${requestBoundMs / 1000} s`));
      }, requestBoundMs);
      this.#pending.set(message.id, { resolve, reject, timer });
      worker.postMessage(message);
    });
  }

  /** Position, lag and state of every projection (for health and metrics), as `ProjectionRunner.status`. */
  async status(): Promise<ProjectionStatus[]> {
    if (!this.#worker && this.#lastStatus.length > 0) return this.#lastStatus.map((status) => ({ ...status, state: this.#stopping ? 'stopped' : 'starting' }));
    const status = await this.#request({ kind: 'status', id: this.#nextId++ });
    this.#lastStatus = status;
    return status;
  }

  /** Clears a failed projection so it resumes from its checkpoint, as `ProjectionRunner.clearFailure`. */
  async clearFailure(name: string): Promise<void> {
    await this.#request({ kind: 'clear-failure', id: this.#nextId++, name });
  }

  /** Stops every projection (each batch under way commits or rolls back whole) and ends the thread. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      if (this.#restartTimer) clearTimeout(this.#restartTimer);
      const worker = this.#worker;
      if (!worker) return;
      const stopped = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), stopBoundMs);
        const done = (): void => {
          clearTimeout(timer);
          resolve(true);
        };
        worker.on('message', (message: FromProjectionThread) => {
          if (message.kind === 'stopped') done();
        });
        worker.once('exit', done);
      });
      worker.postMessage({ kind: 'stop' } satisfies ToProjectionThread);
      if (!(await stopped)) this.#options.log?.('projections did not stop in time: their thread is ended (each uncommitted batch is rolled back)', { boundS: stopBoundMs / 1000 });
      // The loader the thread registered keeps it alive on its own: it is ended here.
      await worker.terminate().catch(() => undefined);
    })();
    return this.#stopping;
  }
}
