/**
 * Cursor paging for every list the API answers. A cursor is opaque to clients (base64url JSON); inside it
 * is either an offset into a deterministic ordering or the last key returned (keyset), per route.
 */
import { z } from 'zod';
import { ApiError } from './api-error.js';

export const maxPageLimit = 5000;
/** Payload bytes in one page of the log (the first event comes whatever its size); a cursor continues. */
export const defaultMaxPageBytes = 4 * 1024 * 1024;

/** The paging part of a list route's querystring. */
export const pageQuery = {
  cursor: z.string().max(500).optional().describe('opaque: the nextCursor of the previous page'),
  limit: z.coerce.number().int().min(1).max(maxPageLimit).default(100),
};

export interface Page<T> {
  items: T[];
  /** Absent on the last page. */
  nextCursor: string | null;
}

export function encodeCursor(value: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** Decodes a cursor this API issued, or answers 400 naming `cursor`. */
export function decodeCursor<T extends z.ZodType>(cursor: string | undefined, shape: T): z.output<T> | null {
  if (cursor === undefined) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  const parsed = shape.safeParse(value);
  if (!parsed.success) throw new ApiError('API_INVALID_REQUEST', { field: 'querystring.cursor', reason: 'is not a cursor this API issued' }, 'querystring.cursor is not a cursor this API issued');
  return parsed.data;
}

const offsetCursor = z.object({ o: z.number().int().min(0) });

/** One page of a fully computed, deterministically ordered list (small read-model answers). */
export function pageOf<T>(all: readonly T[], cursor: string | undefined, limit: number): Page<T> {
  const offset = decodeCursor(cursor, offsetCursor)?.o ?? 0;
  const items = all.slice(offset, offset + limit);
  const next = offset + items.length;
  return { items, nextCursor: next < all.length ? encodeCursor({ o: next }) : null };
}

const keyCursor = z.object({ k: z.string() });

/** The last key a keyset page returned, from its cursor. */
export function keyAfter(cursor: string | undefined): string | null {
  return decodeCursor(cursor, keyCursor)?.k ?? null;
}

/** A keyset page: `rows` were read with `limit + 1` after the cursor's key, in key order. */
export function keysetPage<T>(rows: T[], limit: number, keyOf: (row: T) => string): Page<T> {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last !== undefined ? encodeCursor({ k: keyOf(last) }) : null };
}
