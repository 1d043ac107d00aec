/**
 * The callers of the caller-isolation run, on a thread of their own, as real callers are: `/healthz` asked every
 * 200 ms by a clock the API's thread cannot hold (a freeze there shows as the answer's delay, whenever it starts),
 * and, in the loaded phase, the EBOM and every big body sent at once (sending 140 MB from the API's thread would be
 * the sender's work measured as the API's).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { request } from 'undici';

export interface LoadSenderData {
  address: string;
  token: string;
  load: { ebom: Uint8Array; bodies: Uint8Array[] } | null;
}

export interface LoadSenderResult {
  ebomStatus: number;
  ebomField: string | null;
  ebomS: number;
  bodiesStatuses: Record<string, number>;
  bodiesS: number;
}

export type FromLoadSender = { kind: 'load-done'; result: LoadSenderResult | null } | { kind: 'health'; answerMs: number[] };

const port = parentPort!;
const { address, token, load } = workerData as LoadSenderData;
const headers = { authorization: `Bearer ${token}` };
const round = (value: number): number => Math.round(value * 100) / 100;

let pinging = true;
const answerMs: number[] = [];
const pings = (async () => {
  while (pinging) {
    const asked = performance.now();
    const answer = await request(`${address}/healthz`);
    await answer.body.text();
    answerMs.push(performance.now() - asked);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
})();
port.on('message', () => {
  pinging = false;
  void pings.then(() => {
    port.postMessage({ kind: 'health', answerMs } satisfies FromLoadSender);
    port.close();
  });
});

async function send(work: { ebom: Uint8Array; bodies: Uint8Array[] }): Promise<LoadSenderResult> {
  const result: LoadSenderResult = { ebomStatus: 0, ebomField: null, ebomS: 0, bodiesStatuses: {}, bodiesS: 0 };
  const sendEbom = (async () => {
    const started = performance.now();
    const answer = await request(`${address}/v1/ebom`, { method: 'POST', headers: { ...headers, 'content-type': 'text/csv' }, body: work.ebom });
    const body = (await answer.body.json()) as { error?: { details?: { field?: string } } };
    result.ebomStatus = answer.statusCode;
    result.ebomField = body.error?.details?.field ?? null;
    result.ebomS = round((performance.now() - started) / 1000);
  })();
  const sendBodies = (async () => {
    const started = performance.now();
    await Promise.all(
      work.bodies.map(async (body) => {
        const answer = await request(`${address}/v1/nodes`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
        await answer.body.text();
        result.bodiesStatuses[answer.statusCode] = (result.bodiesStatuses[answer.statusCode] ?? 0) + 1;
      }),
    );
    result.bodiesS = round((performance.now() - started) / 1000);
  })();
  await Promise.all([sendEbom, sendBodies]);
  return result;
}

port.postMessage({ kind: 'load-done', result: load ? await send(load) : null } satisfies FromLoadSender);
