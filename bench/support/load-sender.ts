/**
 * The callers of the caller-isolation run, on a thread of their own: a real client is not on the API's thread, and
 * sending 140 MB from there would be the sender's work measured as the API's. Sends the EBOM and every big body at
 * once, and answers with what each got.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { request } from 'undici';

export interface LoadSenderData {
  address: string;
  token: string;
  ebom: Uint8Array;
  bodies: Uint8Array[];
}

export interface LoadSenderResult {
  ebomStatus: number;
  ebomField: string | null;
  ebomS: number;
  bodiesStatuses: Record<string, number>;
  bodiesS: number;
}

const { address, token, ebom, bodies } = workerData as LoadSenderData;
const headers = { authorization: `Bearer ${token}` };
const round = (value: number): number => Math.round(value * 100) / 100;
const result: LoadSenderResult = { ebomStatus: 0, ebomField: null, ebomS: 0, bodiesStatuses: {}, bodiesS: 0 };

const sendEbom = (async () => {
  const started = performance.now();
  const answer = await request(`${address}/v1/ebom`, { method: 'POST', headers: { ...headers, 'content-type': 'text/csv' }, body: ebom });
  const body = (await answer.body.json()) as { error?: { details?: { field?: string } } };
  result.ebomStatus = answer.statusCode;
  result.ebomField = body.error?.details?.field ?? null;
  result.ebomS = round((performance.now() - started) / 1000);
})();
const sendBodies = (async () => {
  const started = performance.now();
  await Promise.all(
    bodies.map(async (body) => {
      const answer = await request(`${address}/v1/nodes`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
      await answer.body.text();
      result.bodiesStatuses[answer.statusCode] = (result.bodiesStatuses[answer.statusCode] ?? 0) + 1;
    }),
  );
  result.bodiesS = round((performance.now() - started) / 1000);
})();
await Promise.all([sendEbom, sendBodies]);
parentPort!.postMessage(result);
