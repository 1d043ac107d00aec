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

// jsonb rejects U+0000 and lone surrogates; JSON has no NaN or Infinity. Refusing them up front keeps one
// bad event from failing a whole group-commit transaction, and keeps the hash identical after a round trip.
export const unstorableString = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Canonical JSON: object keys sorted, no whitespace, dates as ISO strings, and otherwise what JSON.stringify stores
 * (members that are undefined, functions or symbols omitted, array holes and such items null, `toJSON` asked once).
 * The same value always gives the same bytes, before and after a jsonb round trip; this is what the hash chain is
 * computed over.
 */
export function canonicalJson(value: unknown, path = ''): string {
  const text = canonicalMember(value, path, path.split('.').pop() ?? '');
  if (text === undefined) throw new UnrepresentableValueError(path || '(root)', `is ${typeof value === 'function' ? 'a function' : String(value)}, which JSON cannot represent`);
  return text;
}

/** One member's canonical text, or undefined where JSON.stringify leaves the member out. */
function canonicalMember(given: unknown, path: string, key: string): string | undefined {
  let value = given;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new UnrepresentableValueError(path || '(root)', 'is an invalid Date');
    return JSON.stringify(value.toISOString());
  }
  // What is stored is JSON.stringify's text, which asks toJSON once (URL, Buffer, decimal types): hash the same.
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: (key: string) => unknown }).toJSON(key);
  }
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      if (unstorableString.test(value)) throw new UnrepresentableValueError(path || '(root)', 'contains NUL or an unpaired surrogate');
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new UnrepresentableValueError(path || '(root)', `is ${value}, which JSON cannot represent`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'object': {
      if (Array.isArray(value)) {
        // Array.from visits holes (`[1, , 3]`) as undefined, stored as null; map would skip them.
        return `[${Array.from(value, (item: unknown, index) => canonicalMember(item, join(path, String(index)), String(index)) ?? 'null').join(',')}]`;
      }
      const members: string[] = [];
      for (const [name, item] of Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        const text = canonicalMember(item, join(path, name), name);
        if (text !== undefined) members.push(`${canonicalMember(name, path, name)}:${text}`);
      }
      return `{${members.join(',')}}`;
    }
    default:
      throw new UnrepresentableValueError(path || '(root)', `is a ${typeof value}, which JSON cannot represent`);
  }
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

export const genesisHash = '0'.repeat(64);

/** hash = sha256(prevHash || canonical(event)), both as hex text, prevHash as its 32 raw bytes. */
export function chainHash(prevHashHex: string, canonicalEvent: string): string {
  return createHash('sha256').update(Buffer.from(prevHashHex, 'hex')).update(canonicalEvent, 'utf8').digest('hex');
}

/** `chainHash` on raw bytes: the previous hash as its 32 bytes in, the new one out (the append path keeps them so). */
export function chainHashBytes(prevHash: Buffer, canonicalEvent: string): Buffer {
  return createHash('sha256').update(prevHash).update(canonicalEvent, 'utf8').digest();
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
      if (unstorableString.test(item)) return { path, reason: 'contains NUL or an unpaired surrogate' };
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= maxDepth) return { path, reason: `nests deeper than ${maxDepth} levels` };
    const entries: Array<[string | number, unknown]> = Array.isArray(item) ? item.map((member, index) => [index, member]) : Object.entries(item as Record<string, unknown>);
    // Pushed in reverse so the first offending place in document order is the one named.
    for (let index = entries.length - 1; index >= 0; index -= 1) {
      const [key, member] = entries[index]!;
      if (typeof key === 'string' && unstorableString.test(key)) return { path: join(path, key), reason: 'has a key that contains NUL or an unpaired surrogate' };
      pending.push({ value: member, path: join(path, key), depth: depth + 1 });
    }
  }
  return undefined;
}
