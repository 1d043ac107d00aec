/**
 * The thread that applies the fleet's projections for a `ThreadedProjectionRunner`: a `ProjectionRunner` on an
 * event loop and a connection pool of its own, so a main thread busy polling thousands of BMCs does not hold every
 * round trip of every batch behind its own work (each batch is about eight round trips: at 25,000 BMCs the main
 * thread's loop answered 160 ms late at p99, and events waited 2.4 s to be applied). Requests and their answers
 * travel as messages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EventStore, ProjectionRunner, type ProjectionRunnerOptions, type ProjectionStatus } from '../src/ledger/index.js';
import { fleetProjections, type FleetProjectionOptions } from './index.js';
import { assertNever } from '../events/index.js';

export interface ProjectionThreadData {
  connectionString: string;
  /** Connections of the thread's pool (each live projection reads and applies through one at a time). */
  poolSize: number;
  projections: FleetProjectionOptions;
  runner: Pick<ProjectionRunnerOptions, 'batchSize' | 'standbyRetryMs' | 'onFailure' | 'maxHeldRows'>;
  /** Post an `applied` message per applied batch (only when the host asked for `onApplied`). */
  reportApplied: boolean;
}

export type ToProjectionThread = { kind: 'status'; id: number } | { kind: 'clear-failure'; id: number; name: string } | { kind: 'stop' };
export type FromProjectionThread =
  | { kind: 'started' }
  | { kind: 'failed'; error: string }
  | { kind: 'log'; message: string; fields?: Record<string, unknown> }
  | { kind: 'applied'; projection: string; oldestRecordedAt: number; events: number; appliedAt: number }
  | { kind: 'answer'; id: number; status?: ProjectionStatus[]; error?: string }
  | { kind: 'stopped' };

const port = parentPort!;
const post = (message: FromProjectionThread): void => port.postMessage(message);
const data = workerData as ProjectionThreadData;

let store: EventStore | null = null;
let runner: ProjectionRunner | null = null;

/** Opens the thread's store and starts the projections; a `stop` that arrives meanwhile waits for it. */
const starting = (async () => {
  try {
    // The process that started this thread migrated the schema already.
    store = await EventStore.open({ connectionString: data.connectionString, poolSize: data.poolSize, migrate: false });
    runner = new ProjectionRunner(store, fleetProjections(data.projections), {
      ...data.runner,
      log: (message, fields) => post({ kind: 'log', message, ...(fields ? { fields } : {}) }),
      ...(data.reportApplied
        ? { onApplied: (projection, oldest, events, at) => post({ kind: 'applied', projection, oldestRecordedAt: oldest.getTime(), events, appliedAt: at.getTime() }) }
        : {}),
    });
    await runner.start();
    post({ kind: 'started' });
  } catch (error) {
    post({ kind: 'failed', error: error instanceof Error ? error.message : String(error) });
  }
})();

async function answer(id: number, work: () => Promise<ProjectionStatus[] | undefined>): Promise<void> {
  try {
    const status = await work();
    post({ kind: 'answer', id, ...(status ? { status } : {}) });
  } catch (error) {
    post({ kind: 'answer', id, error: error instanceof Error ? error.message : String(error) });
  }
}

async function stop(): Promise<void> {
  await starting;
  await runner?.stop().catch((error: unknown) => post({ kind: 'log', message: 'projections did not stop cleanly', fields: { error: String(error) } }));
  await store?.close().catch(() => undefined);
  post({ kind: 'stopped' });
}

port.on('message', (message: ToProjectionThread) => {
  switch (message.kind) {
    case 'status':
      void answer(message.id, () => (runner ? runner.status() : Promise.reject(new Error('projections not started'))));
      return;
    case 'clear-failure':
      void answer(message.id, async () => {
        if (!runner) throw new Error('projections not started');
        await runner.clearFailure(message.name);
        return undefined;
      });
      return;
    case 'stop':
      void stop();
      return;
    default:
      assertNever(message, 'message to the projection thread');
  }
});
