/**
 * What parses large request bodies for the API (`BodyThread` in `body-parsing.ts`; run as a process of its own at a
 * lower priority, or as a worker thread): JSON bodies of
 * `offThreadFromBytes` or more, and every EBOM file (parsed and each row validated). A 40 MB EBOM takes seconds to
 * read and validate; here those seconds pass on an event loop of its own, so the request thread keeps answering
 * (`/healthz`, intents) meanwhile. Only the verdict travels back: a refused EBOM sends its problems, never its rows.
 */
import { createHash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { parseEbom, type EbomParse } from '../ebom/index.js';
import { firstUnstorablePart } from '../ledger/index.js';
import { prototypeKeyRefusal } from './prototype-keys.js';

export type ToBodyThread = { id: number; kind: 'json'; bytes: Uint8Array } | { id: number; kind: 'ebom'; text: string; format: 'csv' | 'json' };
export type FromBodyThread =
  | { id: number; kind: 'json'; value: unknown }
  | { id: number; kind: 'json-refused'; reason: string }
  | { id: number; kind: 'json-unstorable'; path: string; reason: string }
  | { id: number; kind: 'ebom'; parse: EbomParse; sha256: string }
  | { id: number; kind: 'failed'; error: string };

function answer(message: ToBodyThread): FromBodyThread {
  switch (message.kind) {
    case 'json': {
      // Decoded here as the request thread decodes a small body (`Buffer#toString`), so both agree byte for byte.
      const text = Buffer.from(message.bytes.buffer, message.bytes.byteOffset, message.bytes.byteLength).toString('utf8');
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        return { id: message.id, kind: 'json-refused', reason: (error as Error).message };
      }
      // Judged here what the request thread's door would refuse anyway (NUL, nesting past any schema): a body nested
      // 100,000 deep cannot even be handed back, and every other one is handed back known to be walkable.
      const unstorable = firstUnstorablePart(value);
      if (unstorable !== undefined) return { id: message.id, kind: 'json-unstorable', path: unstorable.path, reason: unstorable.reason };
      const refusal = prototypeKeyRefusal(value);
      return refusal === null ? { id: message.id, kind: 'json', value } : { id: message.id, kind: 'json-refused', reason: refusal };
    }
    case 'ebom': {
      const parse = parseEbom(message.text, message.format);
      // The digest names the import (`ebom-<sha256>`), so it is taken of the very text that was validated.
      return { id: message.id, kind: 'ebom', parse, sha256: createHash('sha256').update(message.text).digest('hex') };
    }
    default: {
      const never: never = message;
      throw new Error(`unknown body work ${JSON.stringify(never)}`);
    }
  }
}

/**
 * Where jobs come from: a worker's port, or, run as a process of its own (`BodyThread`'s default, at a lower CPU
 * priority), the IPC channel to its parent, which it does not outlive.
 */
const port: { on(event: 'message', listener: (message: ToBodyThread) => void): void; postMessage(message: FromBodyThread): void } = parentPort ?? {
  on: (event, listener) => void process.on(event, listener as (message: unknown) => void),
  postMessage: (message) => void process.send!(message),
};
if (!parentPort) process.on('disconnect', () => process.exit(0));
port.on('message', (message: ToBodyThread) => {
  let reply: FromBodyThread;
  try {
    reply = answer(message);
  } catch (error) {
    reply = { id: message.id, kind: 'failed', error: error instanceof Error ? error.message : String(error) };
  }
  try {
    port.postMessage(reply);
  } catch (error) {
    // An answer that cannot be handed back fails its own request, not the thread.
    port.postMessage({ id: message.id, kind: 'failed', error: error instanceof Error ? error.message : String(error) } satisfies FromBodyThread);
  }
});
