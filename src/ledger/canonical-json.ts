import * as crypto from 'node:crypto';
import { createHash } from 'node:crypto';

/** Why a value cannot be stored exactly as given: PostgreSQL's jsonb refuses it or JSON cannot say it. */
export class UnrepresentableValueError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(reason);
  }
}

// jsonb rejects U+0000 and lone surrogates; JSON has no NaN or Infinity. This expression is the definition; the
// ledger asks `unstorable`, which a property test holds equal to it. Refusing them up front keeps one
// bad event from failing a whole group-commit transaction, and keeps the hash identical after a round trip.
export const unstorableString = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Canonical JSON: object keys sorted, no whitespace, dates as ISO strings, and otherwise what JSON.stringify stores
 * (members that are undefined, functions or symbols omitted, array holes and such items null, `toJSON` asked once).
 * The same value always gives the same bytes, before and after a jsonb round trip; this is what the hash chain is
 * computed over.
 */
export function canonicalJson(value: unknown, path = ''): string {
  const text = canonicalMember(value, path, path.split('.').pop() ?? '', true);
  if (text === undefined) throw new UnrepresentableValueError(path || '(root)', `is ${typeof value === 'function' ? 'a function' : String(value)}, which JSON cannot represent`);
  return text;
}

/**
 * Whether a string holds what jsonb refuses: U+0000 or an unpaired surrogate. `isWellFormed` (V8, Node 20) answers the
 * second natively; the regular expression `unstorableString` says the same, at several times the cost per string.
 */
export function unstorable(text: string): boolean {
  return text.includes('\u0000') || !(text as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * One member's canonical text, or undefined where JSON.stringify leaves the member out. The member is `key` of the
 * value at `parent` (or, with `root`, the value at `parent` itself); its path is written out only where it is needed
 * (an error, or a value with members of its own), not for every leaf.
 */
function canonicalMember(given: unknown, parent: string, key: string, root: boolean): string | undefined {
  let value = given;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new UnrepresentableValueError(pathOf(parent, key, root) || '(root)', 'is an invalid Date');
    return JSON.stringify(value.toISOString());
  }
  // What is stored is JSON.stringify's text, which asks toJSON once (URL, Buffer, decimal types): hash the same.
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: (key: string) => unknown }).toJSON(key);
  }
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      if (unstorable(value)) throw new UnrepresentableValueError(pathOf(parent, key, root) || '(root)', 'contains NUL or an unpaired surrogate');
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new UnrepresentableValueError(pathOf(parent, key, root) || '(root)', `is ${value}, which JSON cannot represent`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'object': {
      // Written out by concatenation, keys sorted by UTF-16 code units (the default sort's order): every append's
      // payload passes through here, and arrays of entries and of members were most of its garbage.
      const path = pathOf(parent, key, root);
      if (Array.isArray(value)) {
        // A hole (`[1, , 3]`) is read as undefined, stored as null.
        let text = '[';
        for (let index = 0; index < value.length; index += 1) {
          text += `${index === 0 ? '' : ','}${canonicalMember(value[index], path, String(index), false) ?? 'null'}`;
        }
        return `${text}]`;
      }
      const record = value as Record<string, unknown>;
      const names = Object.keys(record).sort();
      let text = '{';
      let first = true;
      for (const name of names) {
        const member = canonicalMember(record[name], path, name, false);
        if (member === undefined) continue;
        if (unstorable(name)) throw new UnrepresentableValueError(path || '(root)', 'contains NUL or an unpaired surrogate');
        text += `${first ? '' : ','}${JSON.stringify(name)}:${member}`;
        first = false;
      }
      return `${text}}`;
    }
    default:
      throw new UnrepresentableValueError(pathOf(parent, key, root) || '(root)', `is a ${typeof value}, which JSON cannot represent`);
  }
}

function pathOf(parent: string, key: string, root: boolean): string {
  return root ? parent : join(parent, key);
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

export const genesisHash = '0'.repeat(64);

/** hash = sha256(prevHash || canonical(event)), both as hex text, prevHash as its 32 raw bytes. */
export function chainHash(prevHashHex: string, canonicalEvent: string): string {
  return createHash('sha256').update(Buffer.from(prevHashHex, 'hex')).update(canonicalEvent, 'utf8').digest('hex');
}

/** Node's one-shot hash (20.12 and later): no Hash object per call. Absent before, where `createHash` serves. */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: Buffer, encoding: 'buffer') => Buffer }).hash;
/** Where the previous hash and the event's text are laid side by side for `oneShotHash`; grown on demand. */
let chainInput = Buffer.allocUnsafe(64 * 1024);
const CHAIN_INPUT_MAX = 1024 * 1024;

/**
 * `chainHash` on raw bytes: the previous hash as its 32 bytes in, the new one out (the append path keeps them so). The
 * bytes hashed are the same as `chainHash`'s; the append path hashes every event, so they are written into one reused
 * buffer and hashed in one call.
 */
export function chainHashBytes(prevHash: Buffer, canonicalEvent: string): Buffer {
  // UTF-8 takes at most 3 bytes per UTF-16 unit. A rare large event is hashed the streaming way, so the buffer kept
  // for the rest stays at most 1 MiB.
  const room = 32 + canonicalEvent.length * 3;
  if (!oneShotHash || room > CHAIN_INPUT_MAX) return createHash('sha256').update(prevHash).update(canonicalEvent, 'utf8').digest();
  if (chainInput.length < room) chainInput = Buffer.allocUnsafe(CHAIN_INPUT_MAX);
  prevHash.copy(chainInput, 0, 0, 32);
  const written = chainInput.write(canonicalEvent, 32, 'utf8');
  return oneShotHash('sha256', chainInput.subarray(0, 32 + written), 'buffer');
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The first place in a parsed JSON value that cannot be stored: a key or string with NUL or an unpaired surrogate,
 * or nesting deeper than `maxDepth` (which recursive code further on would pay for with its stack). Iterative, so a
 * hostile depth costs a loop, not a stack overflow. `path` is dotted, `''` for the value itself.
 */
export function firstUnstorablePart(value: unknown, maxDepth = 64): { path: string; reason: string } | undefined {
  const pending: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: '', depth: 0 }];
  const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));
  while (pending.length > 0) {
    const { value: item, path, depth } = pending.pop()!;
    if (typeof item === 'string') {
      if (unstorable(item)) return { path, reason: 'contains NUL or an unpaired surrogate' };
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= maxDepth) return { path, reason: `nests deeper than ${maxDepth} levels` };
    const entries: Array<[string | number, unknown]> = Array.isArray(item) ? item.map((member, index) => [index, member]) : Object.entries(item as Record<string, unknown>);
    // Pushed in reverse so the first offending place in document order is the one named.
    for (let index = entries.length - 1; index >= 0; index -= 1) {
      const [key, member] = entries[index]!;
      if (typeof key === 'string' && unstorable(key)) return { path: join(path, key), reason: 'has a key that contains NUL or an unpaired surrogate' };
      pending.push({ value: member, path: join(path, key), depth: depth + 1 });
    }
  }
  return undefined;
}
