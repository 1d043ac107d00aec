/** Every (holder, key) place inside a JSON value, depth first: where a fuzz test's damage can land. */
export type JsonPlace = { holder: Record<string, unknown> | unknown[]; key: string | number };

export function jsonPlaces(value: unknown, into: JsonPlace[] = []): JsonPlace[] {
  if (Array.isArray(value)) value.forEach((item, index) => (into.push({ holder: value, key: index }), jsonPlaces(item, into)));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      into.push({ holder: value as Record<string, unknown>, key });
      jsonPlaces(item, into);
    }
  }
  return into;
}
