/**
 * `@test-utils` for the official client's suite: the names its files import, written for fleet-ledger (see
 * `README.md`). The nodes are fleet-ledger's KurrentDB face (`test-node.ts`); the rest are the small helpers the
 * files use, with the behaviour their assertions rely on (the test events' types, sizes and payloads).
 */
import { binaryEvent, jsonEvent, type EventData, type EventStoreDBClient } from '@eventstore/db-client';
import { kurrentCompatibleVersion } from '../../../src/kurrent/index.js';
import { TestNode, type EndPoint } from './test-node.js';

export { TestNode as Cluster, suitePrincipal } from './test-node.js';

export const createTestNode = (): TestNode => new TestNode(1);
export const createTestCluster = (count = 3): TestNode => new TestNode(count);
export const createInsecureTestNode = (): TestNode => new TestNode(1, true);
export const createInsecureTestCluster = (count = 3): TestNode => new TestNode(count, true);

/** The payload of `jsonTestEvents`. */
export interface TestEventData {
  message: 'test';
  index: number;
}

/** `count` JSON events of `type`, each `{ message: 'test', index }` (128 bytes on the wire each, as the suite counts). */
export function jsonTestEvents(count = 4, type = 'test'): EventData[] {
  return Array.from({ length: count }, (_, index) => jsonEvent({ type, data: { message: 'test', index } }));
}

/** `count` binary events of `type`, each the bytes of `hello: <index>`. */
export function binaryTestEvents(count = 4, type = 'test'): EventData[] {
  return Array.from({ length: count }, (_, index) => binaryEvent({ type, data: Buffer.from(`hello: ${index}`) }));
}

/** Everything a read yields, in order. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

export const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise with its resolve and reject in hand. */
export class Defer {
  resolve!: () => void;
  reject!: (reason?: string | Error) => void;
  readonly promise: Promise<void>;

  constructor() {
    this.promise = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }
}

/** The endpoint the client's channel is connected to. */
export async function getCurrentConnection(client: EventStoreDBClient): Promise<EndPoint> {
  const channel = await (client as unknown as { getChannel(): Promise<{ getTarget(): string }> }).getChannel();
  const [, address, port] = channel.getTarget().split(':');
  return { address: address!, port: Number.parseInt(port!, 10) };
}

/**
 * Whether the server's version matches `>=21.10`, `<=22`, `23.10.0`... The version is the one the face reports in
 * ServerFeatures (`kurrentCompatibleVersion`), known before any node is up (the suite asks while collecting).
 */
export function matchServerVersion(strings: TemplateStringsArray, ...parts: unknown[]): boolean {
  const wanted = strings.reduce((text, chunk, index) => `${text}${chunk}${index < parts.length ? String(parts[index]) : ''}`, '');
  const match = /^(>=|<=)?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(wanted);
  if (!match) throw new Error(`malformed version match ${wanted}`);
  const [, operator = '===', ...given] = match;
  const server = kurrentCompatibleVersion.split('.').map(Number);
  // Compare only as many parts as the match names.
  let order = 0;
  for (let index = 0; index < 3 && order === 0; index += 1) {
    if (given[index] === undefined) break;
    order = Math.sign(server[index]! - Number(given[index]));
  }
  return operator === '>=' ? order >= 0 : operator === '<=' ? order <= 0 : order === 0;
}

/** The suite's globals (`describe`, `it`): the ones `jest-compat.ts` installed, which know the expected failures. */
const globals = globalThis as unknown as { describe: typeof import('vitest').describe; it: typeof import('vitest').it };
export const optionalDescribe = (run: boolean) => (run ? globals.describe : globals.describe.skip);
export const optionalTest = (run: boolean) => (run ? globals.it : globals.it.skip);

/** KurrentDB's AtomPub HTTP API: the face serves gRPC only. */
export async function postEventViaHttpApi(): Promise<string> {
  throw new Error('fleet-ledger serves no KurrentDB HTTP API (AtomPub); its own HTTP API is another contract');
}

export { createManyPs, createManyPsToAll, type CreatedPS, type CreatedPSToAll } from './persistent-subscriptions.js';
