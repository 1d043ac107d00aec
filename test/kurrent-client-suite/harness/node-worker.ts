/**
 * The test nodes' faces, in one worker thread per test worker: their own event loop and CPU, as a KurrentDB node is a
 * process of its own, so the client and the server do not take turns on one thread. The thread lives as long as the
 * test worker and serves every file's nodes (the face's modules load once, not once per node).
 *
 * Messages: `{ id, start: NodeWorkerData }` starts a face over the database given and answers `{ id, port }` (or
 * `{ id, error }`), the face then known by that id; `{ id, stop: graceMs, face }` closes a face (calls still open
 * after `graceMs` are cut) and answers `{ id }`.
 */
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { TokenTable } from '../../../src/api/index.js';
import { EventStore } from '../../../src/ledger/index.js';
import { serveKurrent, type KurrentServer } from '../../../src/kurrent/index.js';

export interface NodeWorkerData {
  databaseUrl: string;
  port: number;
  tls: { certPath: string; keyPath: string } | null;
  maxAppendBytes: number;
  principal: { username: string; password: string };
}

/** `id` names the request (a started face keeps its start's id); `face` the face a stop is for. */
export type NodeWorkerRequest = { id: number; start: NodeWorkerData } | { id: number; stop: number; face: number };
export type NodeWorkerAnswer = { id: number; port?: number; error?: string };

const faces = new Map<number, { server: KurrentServer; store: EventStore }>();

async function start(data: NodeWorkerData): Promise<{ server: KurrentServer; store: EventStore }> {
  const store = await EventStore.open({ connectionString: data.databaseUrl, pollIntervalMs: 200, migrate: false });
  try {
    const server = await serveKurrent({
      store,
      tokens: new TokenTable([{ token: data.principal.password, principal: data.principal.username, role: 'admin' }]),
      port: data.port,
      maxAppendBytes: data.maxAppendBytes,
      ...(data.tls ? { tls: { certChain: readFileSync(data.tls.certPath), privateKey: readFileSync(data.tls.keyPath) } } : {}),
    });
    return { server, store };
  } catch (error) {
    await store.close();
    throw error;
  }
}

parentPort!.on('message', (request: NodeWorkerRequest) => {
  const answer = (message: Omit<NodeWorkerAnswer, 'id'>) => parentPort!.postMessage({ id: request.id, ...message });
  if ('start' in request) {
    start(request.start).then(
      (face) => {
        faces.set(request.id, face);
        answer({ port: face.server.port });
      },
      (error: unknown) => answer({ error: error instanceof Error ? error.message : String(error) }),
    );
    return;
  }
  const face = faces.get(request.face);
  faces.delete(request.face);
  if (!face) return answer({});
  void face.server
    .close(request.stop)
    .then(() => face.store.close())
    .catch(() => undefined)
    .then(() => answer({}));
});
