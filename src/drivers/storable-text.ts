/**
 * What a device says is stored as text PostgreSQL accepts. A BMC or a tool's output can carry NUL (a C string
 * read past its end, a damaged line) or half of a surrogate pair (a UTF-16 field cut in the middle); neither can
 * be stored in jsonb, and one such byte would make every observation of that node fail to append for good. Each
 * becomes U+FFFD, the replacement character, so the rest of the reading is kept and the damage stays visible.
 */
const unstorable = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function storableText(text: string): string {
  return text.replace(unstorable, '\uFFFD');
}

/** `storableText` applied to every string and key of a JSON-like value (arrays and plain objects); the rest as is. */
export function storableValue<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) return value.map((item) => storableValue(item)) as T;
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) result[storableText(key)] = storableValue(item);
    return result as T;
  }
  return value;
}
