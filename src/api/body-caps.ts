/**
 * The largest body each kind of request may carry, in one place: the server's default for JSON, the EBOM route's for
 * a bill of materials. A body over its cap is refused while it is still arriving (`API_PAYLOAD_TOO_LARGE`, 413, the
 * cap named in `details.cap`), so no handler, parser or thread ever holds more than this. The README's "Body caps"
 * table mirrors this record (a test checks it).
 */
export const bodyCaps = {
  /** Any JSON body: intents, observations, rollouts (the largest legitimate one, a GPU inventory, is well under 1 MiB). */
  jsonBodyBytes: 8 * 1024 * 1024,
  /** An EBOM file (`POST /v1/ebom`): room for about 200,000 rows, eight times the largest fleet tested (25,000). */
  ebomBodyBytes: 64 * 1024 * 1024,
} as const;

export type BodyCapName = keyof typeof bodyCaps;

/**
 * Bodies at least this large are parsed by the body process (`body-parsing.ts`), not on the request thread: below it
 * a parse takes well under a millisecond and a round trip to the thread would cost more than it saves.
 */
export const offThreadFromBytes = 64 * 1024;

/** The cap a route's limit is, by its bytes (a route's limit is always one of `bodyCaps`). */
export function capOfLimit(limitBytes: number): BodyCapName {
  const found = (Object.keys(bodyCaps) as BodyCapName[]).find((name) => bodyCaps[name] === limitBytes);
  return found ?? 'jsonBodyBytes';
}
