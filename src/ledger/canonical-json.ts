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
const unstorableString = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Canonical JSON: object keys sorted, no whitespace, `undefined` members omitted, dates as ISO strings.
 * The same value always gives the same bytes, before and after a jsonb round trip; this is what the hash
 * chain is computed over.
 */
export function canonicalJson(value: unknown, path = ''): string {
  if (value === null) return 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  switch (typeof value) {
    case 'string':
      if (unstorableString.test(value)) throw new UnrepresentableValueError(path || '(root)', 'contains NUL or an unpaired surrogate');
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new UnrepresentableValueError(path || '(root)', `is ${value}, which JSON cannot represent`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(value)) {
        return `[${value.map((item, index) => (item === undefined ? 'null' : canonicalJson(item, join(path, String(index))))).join(',')}]`;
      }
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, item]) => item !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([key, item]) => `${canonicalJson(key, path)}:${canonicalJson(item, join(path, key))}`).join(',')}}`;
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

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
