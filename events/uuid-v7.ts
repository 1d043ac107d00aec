/**
 * Time-ordered UUIDs (RFC 9562 version 7). The clock and the random source come in as arguments so the
 * domain stays deterministic under replay; `src/` passes `Date.now` and `crypto.getRandomValues`.
 */
export function uuidV7(nowMs: number, random: (bytes: Uint8Array) => Uint8Array): string {
  const b = random(new Uint8Array(16));
  let ms = Math.max(0, Math.floor(nowMs));
  for (let i = 5; i >= 0; i -= 1) {
    b[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  // One table lookup per byte: an event id is made for every event appended without one.
  const x = HEX;
  return `${x[b[0]!]}${x[b[1]!]}${x[b[2]!]}${x[b[3]!]}-${x[b[4]!]}${x[b[5]!]}-${x[b[6]!]}${x[b[7]!]}-${x[b[8]!]}${x[b[9]!]}-${x[b[10]!]}${x[b[11]!]}${x[b[12]!]}${x[b[13]!]}${x[b[14]!]}${x[b[15]!]}`;
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
