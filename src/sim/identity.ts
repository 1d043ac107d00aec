/**
 * Per-BMC identity. A capture carries one machine's serial numbers, UUIDs, MAC addresses and host names; every
 * simulated BMC serves the same capture with those values replaced by its own. The replacement is a pure function
 * of (kind, original value, BMC index), computed at serve time, so nothing per BMC is stored.
 *
 * Guarantees: MACs and serials with at least five letters or digits are unique per BMC index (below 65,536 for
 * MACs and 100,000 for serials); the same original value always maps to the same value within one BMC, so links
 * between resources stay consistent; MACs keep their vendor prefix (OUI) and the spacing between a node's ports.
 */
import { fnv1a, mix32 } from './random.ts';

export type IdentityKind = 'serial' | 'uuid' | 'mac' | 'hostname';

export interface IdentityToken {
  kind: IdentityKind;
  /** The value exactly as it appears in the capture. */
  original: string;
}

const SERIAL_KEYS = new Set(['SerialNumber', 'ServiceTag', 'ChassisServiceTag', 'SystemServiceTag', 'BoardSerialNumber']);
const UUID_KEYS = new Set(['UUID', 'ServiceIdentification']);
const MAC_KEYS = new Set(['MACAddress', 'PermanentMACAddress', 'ManagerMACAddress', 'MacAddress']);
const HOST_KEYS = new Set(['HostName', 'FQDN']);

const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const MAC_PATTERN = /^[0-9a-fA-F]{2}([:-])[0-9a-fA-F]{2}(\1[0-9a-fA-F]{2}){4}$/;
const PLACEHOLDERS = /^(n\/?a|none|null|unknown|not specified|not available|to be filled.*|default string|0+|f+|123456789|system serial number|chassis serial number|\s*)$/i;

/** The kind of identity a property holds, judged from its name and value; undefined when it is not identity. */
export function identityKindOf(key: string, value: string): IdentityKind | undefined {
  const trimmed = value.trim();
  if (trimmed.length < 6 || PLACEHOLDERS.test(trimmed)) return undefined;
  if (MAC_KEYS.has(key)) return MAC_PATTERN.test(trimmed) && !/^(00[:-]){5}00$/.test(trimmed) ? 'mac' : undefined;
  if (UUID_KEYS.has(key)) return UUID_PATTERN.test(trimmed) && !/^[0-]+$/.test(trimmed) ? 'uuid' : undefined;
  if (SERIAL_KEYS.has(key)) return /[0-9A-Za-z]{5}/.test(trimmed) ? 'serial' : undefined;
  if (HOST_KEYS.has(key)) return /^[A-Za-z0-9][A-Za-z0-9.-]*$/.test(trimmed) && !/^\d+(\.\d+){3}$/.test(trimmed) ? 'hostname' : undefined;
  return undefined;
}

/** Collects the identity values of one parsed resource into `found` (keyed by the original string). */
export function collectIdentity(resource: unknown, found: Map<string, IdentityToken>): void {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (typeof value === 'string') {
        const kind = identityKindOf(key, value);
        if (kind) {
          const original = kind === 'serial' || kind === 'hostname' ? value.trim() : value;
          if (!found.has(original)) found.set(original, { kind, original });
        }
      } else visit(value);
    }
  };
  visit(resource);
}

/**
 * Drops host names that contain another identity value (`idrac-F54P1G3` holds the service tag): substituting the
 * inner value already makes them per-BMC, and keeps the host name consistent with the serial.
 */
export function pruneNestedHostnames(found: Map<string, IdentityToken>): void {
  const others = [...found.values()].filter((token) => token.kind !== 'hostname').map((token) => token.original);
  for (const [original, token] of found) {
    if (token.kind === 'hostname' && others.some((inner) => original.includes(inner))) found.delete(original);
  }
}

const DIGITS = '0123456789';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const HEX = '0123456789abcdef';

/** The value BMC number `index` serves in place of `token.original`. */
export function deriveIdentity(token: IdentityToken, index: number, seed: number): string {
  switch (token.kind) {
    case 'mac':
      return deriveMac(token.original, index);
    case 'uuid':
      return deriveUuid(token.original, index, seed);
    case 'serial':
      return deriveSerial(token.original, index, seed);
    case 'hostname':
      return `${token.original}-${index}`;
    default: {
      const unreachable: never = token.kind;
      return unreachable;
    }
  }
}

/** Keeps the OUI and moves the device part by a stride of 256 per BMC, so a node's ports stay adjacent. */
function deriveMac(original: string, index: number): string {
  const separator = original[2] ?? ':';
  const bytes = original.split(separator).map((part) => parseInt(part, 16));
  const device = (((bytes[3] ?? 0) << 16) | ((bytes[4] ?? 0) << 8) | (bytes[5] ?? 0)) >>> 0;
  const moved = (device + (index + 1) * 256) % 0x1000000;
  const out = [bytes[0] ?? 0, bytes[1] ?? 0, bytes[2] ?? 0, (moved >> 16) & 255, (moved >> 8) & 255, moved & 255]
    .map((byte) => byte.toString(16).padStart(2, '0'))
    .join(separator);
  return original === original.toUpperCase() ? out.toUpperCase() : out;
}

function deriveUuid(original: string, index: number, seed: number): string {
  let out = '';
  const upper = !/[a-f]/.test(original);
  const base = fnv1a(`${seed}:${index}:${original}`);
  let position = 0;
  for (const char of original) {
    if (char === '-') {
      out += char;
      continue;
    }
    // Keep the version nibble so the value is still a well-formed UUID of the same version.
    if (position === 12) out += char;
    else {
      const digit = HEX[mix32(base + Math.imul(position + 1, 0x9e3779b9)) & 15] ?? '0';
      out += upper ? digit.toUpperCase() : digit;
    }
    position++;
  }
  return out;
}

/**
 * Keeps each character's class (digit, upper, lower, other) and length; the last five letters or digits encode
 * the BMC index in mixed radix (so serials are unique per BMC), the others come from a hash.
 */
function deriveSerial(original: string, index: number, seed: number): string {
  const chars = [...original];
  const alphabetOf = (char: string): string | undefined =>
    DIGITS.includes(char) ? DIGITS : UPPER.includes(char) ? UPPER : LOWER.includes(char) ? LOWER : undefined;
  const positions = chars.map((char, at) => (alphabetOf(char) ? at : -1)).filter((at) => at >= 0);
  const base = fnv1a(`${seed}:${index}:${original}`);
  for (const at of positions) {
    const alphabet = alphabetOf(chars[at] ?? '') ?? DIGITS;
    chars[at] = alphabet[mix32(base + Math.imul(at + 1, 0x9e3779b9)) % alphabet.length] ?? '0';
  }
  // index + offset modulo the mixed radix of the last five positions: a bijection, so unique per index.
  const tail = positions.slice(-5).reverse();
  const radix = tail.reduce((product, at) => product * (alphabetOf(original[at] ?? '') ?? DIGITS).length, 1);
  let rest = (index + (mix32(fnv1a(`${seed}:${original}`)) % radix)) % radix;
  for (const at of tail) {
    const alphabet = alphabetOf(original[at] ?? '') ?? DIGITS;
    chars[at] = alphabet[rest % alphabet.length] ?? '0';
    rest = Math.floor(rest / alphabet.length);
  }
  return chars.join('');
}
