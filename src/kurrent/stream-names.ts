/**
 * KurrentDB stream names and the ledger's. A KurrentDB name is any non-empty sequence of bytes (the clients send
 * UTF-8): spaces, brackets, `$` for the server's system streams, `$$<stream>` for a stream's metadata. The ledger's
 * names are 1 to 200 characters of letters, digits and `. _ : @ -`, starting with a letter or digit
 * (`streamNameSchema`), and every stream it holds keeps to that.
 *
 * The mapping, applied to application streams (fleet streams, `node-...` and the rest, keep their names, and the
 * ledger refuses one it cannot take):
 * - a name the ledger can take, not starting with `kdb:`, is stored as it is (`orders-17`, `test_stream_name`);
 * - any other is stored as `kdb:` followed by the name with every byte outside `A-Z a-z 0-9 . _ : -` written `@XX`
 *   (two upper-case hex digits): `pipeline test` is `kdb:pipeline@20test`, `$$orders` is `kdb:@24@24orders`,
 *   `kdb:x` is `kdb:kdb:x`. Reading back undoes it, so a client sees its own name, byte for byte.
 * A name whose stored form would pass 200 characters is refused (InvalidArgument).
 */
import { isFleetStream } from '../../events/index.js';
import { KurrentCallError } from './kurrent-error.js';

export const escapedPrefix = 'kdb:';
const maxLedgerName = 200;
const plain = /^[A-Za-z0-9][A-Za-z0-9._:@-]*$/;
const keptByte = (byte: number): boolean =>
  (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte === 0x2e || byte === 0x5f || byte === 0x3a || byte === 0x2d;

/** A KurrentDB stream name (its bytes) as the ledger stores it; throws InvalidArgument when it cannot be stored. */
export function ledgerStreamName(name: Uint8Array): string {
  if (name.length === 0) throw KurrentCallError.badRequest('stream_identifier', 'is empty (a stream has a name)');
  const text = Buffer.from(name).toString('utf8');
  // A fleet stream keeps its name (the ledger refuses one it cannot take, naming why).
  if (isFleetStream(text)) return text;
  if (plain.test(text) && !text.startsWith(escapedPrefix) && text.length <= maxLedgerName) return text;
  let escaped = escapedPrefix;
  for (const byte of name) escaped += keptByte(byte) ? String.fromCharCode(byte) : `@${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  if (escaped.length > maxLedgerName) {
    throw KurrentCallError.badRequest('stream_identifier', `is too long: stored as ${escaped.length} characters, past the ledger's ${maxLedgerName} (bytes other than letters, digits and . _ : - take 3 characters each)`);
  }
  return escaped;
}

/** A ledger stream name as the KurrentDB name it stands for (its bytes). */
export function kurrentStreamName(stored: string): Buffer {
  if (!stored.startsWith(escapedPrefix)) return Buffer.from(stored, 'utf8');
  const body = stored.slice(escapedPrefix.length);
  const bytes: number[] = [];
  for (let index = 0; index < body.length; index += 1) {
    if (body[index] === '@') {
      bytes.push(Number.parseInt(body.slice(index + 1, index + 3), 16));
      index += 2;
    } else bytes.push(body.charCodeAt(index));
  }
  return Buffer.from(bytes);
}

/** The KurrentDB name as text (UTF-8), for messages and comparisons. */
export function kurrentStreamText(stored: string): string {
  return kurrentStreamName(stored).toString('utf8');
}

/** `$$<stream>`: the stream that holds `<stream>`'s metadata. */
export function metastreamOf(name: Uint8Array): Buffer | null {
  return name.length > 2 && name[0] === 0x24 && name[1] === 0x24 ? Buffer.from(name.subarray(2)) : null;
}
