/**
 * What JSON.parse would silently rewrite in a request body, found in the raw bytes before it is parsed: bytes that
 * are not UTF-8 (a decoder replaces them with U+FFFD, and the ledger would store a text the sender never sent) and
 * integers beyond ±(2^53 − 1) (a JavaScript number rounds them, and the ledger would store another number). Both
 * are refused naming the field, never stored rewritten. Pure: bytes in, verdict out; the HTTP API's JSON parser and
 * the KurrentDB face's append call it, and so can any other path that reads a JSON body (a streamed or off-thread
 * parser of large bodies).
 */

export type StrictJsonProblem =
  /** `field` names the string value (or the object whose member name) holding the bytes; the root outside any value. */
  | { kind: 'invalid-utf8'; field: string; offset: number }
  | { kind: 'unsafe-integer'; field: string; offset: number; literal: string };

export type StrictJsonVerdict = { ok: true; text: string } | { ok: false; problem: StrictJsonProblem };

const fatalDecoder = new TextDecoder('utf-8', { fatal: true });

/** A run of 16 digits, or an exponent: the only number literals that can reach beyond 2^53 (9007199254740992). */
const possiblyUnsafeNumber = /\d{16}|\d[eE]/;

/**
 * Checks a JSON body's bytes. On success, the decoded text (the caller parses it as it would have). Otherwise the
 * first problem, with the field as `<root>.member.0.member` and the byte offset. Malformed JSON (other than bytes
 * that are not UTF-8) is left to the parser, which reports it as it always did.
 */
export function checkStrictJson(bytes: Uint8Array, root = 'body'): StrictJsonVerdict {
  let text: string | null = null;
  try {
    text = fatalDecoder.decode(bytes);
  } catch {
    text = null;
  }
  // The common body: valid UTF-8 with no long digit run and no exponent needs no walk.
  if (text !== null && !possiblyUnsafeNumber.test(text)) return { ok: true, text };
  const problem = firstProblem(bytes, root);
  if (problem) return { ok: false, problem };
  // Not UTF-8 but no problem found by the walk: the bytes at fault lie where the JSON is malformed anyway.
  if (text === null) return { ok: false, problem: { kind: 'invalid-utf8', field: root, offset: firstInvalidUtf8(bytes, 0, bytes.length) } };
  return { ok: true, text };
}

/** A sentence for the refusal: what is wrong, where, and what to send instead. */
export function describeStrictJsonProblem(problem: StrictJsonProblem): { field: string; reason: string } {
  switch (problem.kind) {
    case 'invalid-utf8':
      return {
        field: problem.field,
        reason: `is not valid UTF-8 (at byte ${problem.offset}): send text as UTF-8; nothing is stored rewritten`,
      };
    case 'unsafe-integer':
      return {
        field: problem.field,
        reason: `is ${problem.literal.length > 40 ? `${problem.literal.slice(0, 40)}...` : problem.literal}, an integer beyond ±9007199254740991 (2^53 − 1), which would be stored rounded: send it as a string`,
      };
    default: {
      const unknown: never = problem;
      throw new Error(`unknown problem ${JSON.stringify(unknown)}`);
    }
  }
}

interface Frame {
  kind: 'object' | 'array';
  /** The member being read (object) or the element's index (array). */
  segment: string;
  index: number;
  expectsName: boolean;
}

const isDigitByte = (byte: number): boolean => byte >= 0x30 && byte <= 0x39;

function pathOf(root: string, stack: readonly Frame[]): string {
  return [root, ...stack.map((frame) => frame.segment)].join('.');
}

/** Walks the JSON structure over the raw bytes (every structural character is ASCII), tracking the path. */
function firstProblem(bytes: Uint8Array, root: string): StrictJsonProblem | null {
  const stack: Frame[] = [];
  let i = 0;
  while (i < bytes.length) {
    const byte = bytes[i]!;
    const top = stack[stack.length - 1];
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d || byte === 0x3a) {
      if (byte === 0x3a && top) top.expectsName = false;
      i += 1;
    } else if (byte === 0x22) {
      const start = i + 1;
      let end = start;
      while (end < bytes.length && bytes[end] !== 0x22) end += bytes[end] === 0x5c ? 2 : 1;
      const invalid = firstInvalidUtf8(bytes, start, Math.min(end, bytes.length));
      if (top?.kind === 'object' && top.expectsName) {
        if (invalid >= 0) return { kind: 'invalid-utf8', field: pathOf(root, stack.slice(0, -1)), offset: invalid };
        top.segment = memberName(bytes, start, end);
      } else if (invalid >= 0) {
        return { kind: 'invalid-utf8', field: pathOf(root, stack), offset: invalid };
      }
      i = end + 1;
    } else if (byte === 0x7b || byte === 0x5b) {
      stack.push({ kind: byte === 0x7b ? 'object' : 'array', segment: '0', index: 0, expectsName: byte === 0x7b });
      i += 1;
    } else if (byte === 0x7d || byte === 0x5d) {
      stack.pop();
      i += 1;
    } else if (byte === 0x2c) {
      if (top?.kind === 'array') top.segment = String((top.index += 1));
      else if (top) top.expectsName = true;
      i += 1;
    } else if (byte === 0x2d || isDigitByte(byte)) {
      const start = i;
      while (i < bytes.length && (isDigitByte(bytes[i]!) || bytes[i] === 0x2d || bytes[i] === 0x2b || bytes[i] === 0x2e || bytes[i] === 0x65 || bytes[i] === 0x45)) i += 1;
      const literal = String.fromCharCode(...bytes.subarray(start, i));
      if (isUnsafeInteger(literal)) return { kind: 'unsafe-integer', field: pathOf(root, stack), offset: start, literal };
    } else if (byte >= 0x80) {
      return { kind: 'invalid-utf8', field: root, offset: i };
    } else {
      // true, false, null, or malformed JSON: the parser judges the latter.
      i += 1;
    }
  }
  return null;
}

/** A member name as JSON.parse would read it (escapes included); the bytes are known to be UTF-8 here. */
function memberName(bytes: Uint8Array, start: number, end: number): string {
  const raw = fatalDecoder.decode(bytes.subarray(start, end));
  try {
    return String(JSON.parse(`"${raw}"`));
  } catch {
    return raw;
  }
}

function isUnsafeInteger(literal: string): boolean {
  if (/^-?\d+$/.test(literal)) {
    const digits = literal.replace(/^-?0*/, '');
    return digits.length > 16 || (digits.length === 16 && BigInt(digits) > BigInt(Number.MAX_SAFE_INTEGER));
  }
  const value = Number(literal);
  return Number.isInteger(value) && Math.abs(value) > Number.MAX_SAFE_INTEGER;
}

/**
 * The offset of the first byte in [from, to) that does not begin a well-formed UTF-8 sequence (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or -1.
 */
export function firstInvalidUtf8(bytes: Uint8Array, from: number, to: number): number {
  let i = from;
  while (i < to) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      i += 1;
      continue;
    }
    let length: number;
    let min = 0x80;
    let max = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) length = 2;
    else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead === 0xe0) min = 0xa0;
      if (lead === 0xed) max = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead === 0xf0) min = 0x90;
      if (lead === 0xf4) max = 0x8f;
    } else return i;
    if (i + length > to) return i;
    for (let k = 1; k < length; k += 1) {
      const next = bytes[i + k]!;
      if (next < (k === 1 ? min : 0x80) || next > (k === 1 ? max : 0xbf)) return i;
    }
    i += length;
  }
  return -1;
}
