/**
 * C2SP signed notes (https://c2sp.org/signed-note) with Ed25519 keys, and the tlog-checkpoint body they carry
 * (https://c2sp.org/tlog-checkpoint): the format of Go's sumdb, Trillian Tessera and the transparency-log witnesses,
 * so their tooling reads our checkpoints and ours reads theirs. Byte-compatible with golang.org/x/mod/sumdb/note:
 * its published keys and signatures are test vectors in `test/replay/signed-note.unit.test.ts`.
 *
 * - key ID: the first 4 bytes of SHA-256(name || 0x0A || 0x01 || 32-byte public key);
 * - verifier key `<name>+<8 hex key ID>+<base64(0x01 || public key)>`;
 *   signer key `PRIVATE+KEY+<name>+<8 hex key ID>+<base64(0x01 || 32-byte seed)>`;
 * - note: text (ending in a newline, empty lines allowed), a blank line, then one to 100 lines
 *   `— <name> <base64(key ID || signature)>` (U+2014 EM DASH, a space). The signature is over the text's UTF-8 bytes,
 *   final newline included.
 *
 * Guarantees: `openNote` returns a text only when at least one known key signed it and every signature by a known key
 * verifies; signatures by unknown keys are reported, never trusted. Nothing here reads a clock or the network.
 */
import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, verify, type KeyObject } from 'node:crypto';

/** The errors of this file: all are about the bytes given, so none is worth retrying. */
export const signedNoteErrorCatalogue = {
  NOTE_MALFORMED: { retryable: false, meaning: 'not a signed note: no final newline, no blank line before the signatures, a bad signature line, a control character, invalid UTF-8, or more than 100 signatures' },
  NOTE_BAD_KEY: { retryable: false, meaning: 'a signer or verifier key string that is malformed, of an unknown algorithm, or whose key ID does not match its key' },
  NOTE_AMBIGUOUS_KEY: { retryable: false, meaning: 'two different verifier keys share a name and key ID, and a signature names them' },
  NOTE_INVALID_SIGNATURE: { retryable: false, meaning: 'a signature by a known key does not verify: the text or the signature was altered' },
  NOTE_UNVERIFIED: { retryable: false, meaning: 'no signature by a known key: the text must not be trusted' },
  CHECKPOINT_MALFORMED: { retryable: false, meaning: 'the note text is not a C2SP tlog-checkpoint body (origin, decimal size, base64 root, extension lines)' },
} as const satisfies Record<string, { retryable: boolean; meaning: string }>;

export type SignedNoteErrorCode = keyof typeof signedNoteErrorCatalogue;

/** A key that signed a note: its name and its 8-hex-digit key ID. */
export interface NoteSigner {
  name: string;
  keyId: string;
}

export interface SignedNoteErrorData {
  /** The key concerned, for key and signature errors (never any private key material). */
  name?: string;
  keyId?: string;
  /** The 1-based line of the note or checkpoint text that is at fault. */
  line?: number;
  /** For NOTE_UNVERIFIED: who did sign it. */
  unverified?: NoteSigner[];
}

export class SignedNoteError extends Error {
  override readonly name = 'SignedNoteError';
  readonly retryable = false;

  constructor(
    readonly code: SignedNoteErrorCode,
    message: string,
    readonly data: SignedNoteErrorData = {},
  ) {
    super(message);
  }
}

const ed25519 = 0x01;
/** PKCS#8 and SPKI DER headers of an Ed25519 key (RFC 8410): the raw 32 bytes follow. */
const pkcs8Prefix = Buffer.from('302e020100300506032b657004220420', 'hex');
const spkiPrefix = Buffer.from('302a300506032b6570032100', 'hex');
const signaturePrefix = '\u2014 ';
const maxSignatures = 100;

// --- Text rules shared by notes and checkpoints ------------------------------------------------------------------

/** C0 controls other than newline: forbidden anywhere in a signed note. */
const controlCharacter = /[\x00-\x09\x0b-\x1f]/;
/** A UTF-16 surrogate without its pair: a JavaScript string that has no UTF-8 encoding. */
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const isNoteText = (text: string): boolean => !controlCharacter.test(text) && !loneSurrogate.test(text);

/**
 * A key name (golang.org/x/mod/sumdb/note isValidName): non-empty, valid UTF-8, no Unicode space (the White_Space
 * property, which is Go's unicode.IsSpace) and no '+'. Control characters are refused too: no note could carry them.
 */
const isKeyName = (name: string): boolean => name !== '' && !name.includes('+') && !/\p{White_Space}/u.test(name) && isNoteText(name);

/** Standard base64 with padding, strictly: what Go's base64.StdEncoding accepts from a single line. */
function strictBase64(text: string): Buffer | null {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)) return null;
  return Buffer.from(text, 'base64');
}

/** Go's chop: the text before the first `separator` and the text after it ('' when there is none). */
function chop(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + separator.length)];
}

// --- Keys --------------------------------------------------------------------------------------------------------

/** The key ID of an Ed25519 key: SHA-256(name || 0x0A || 0x01 || public key)[:4], as 8 lowercase hex digits. */
function keyIdOf(name: string, publicKey: Uint8Array): string {
  return createHash('sha256').update(name, 'utf8').update(Buffer.from([0x0a, ed25519])).update(publicKey).digest().subarray(0, 4).toString('hex');
}

function privateKeyOf(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([pkcs8Prefix, seed]), format: 'der', type: 'pkcs8' });
}

function rawPublicKeyOf(privateKey: KeyObject): Buffer {
  return Buffer.from(createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(spkiPrefix.length));
}

/** A parsed signer key. Holds the private key: never log it. */
export interface SignerKey {
  name: string;
  keyId: string;
  /** The raw 32-byte Ed25519 public key. */
  publicKey: Buffer;
  privateKey: KeyObject;
}

/** A parsed verifier key. */
export interface VerifierKey {
  name: string;
  keyId: string;
  /** The raw 32-byte Ed25519 public key. */
  publicKey: Buffer;
  key: KeyObject;
}

/** The algorithm byte and the 32 key bytes of `<name>+<id>+<base64 key>`, checked as Go's NewVerifier and NewSigner do. */
function keyMaterial(kind: 'signer' | 'verifier', name: string, idHex: string, keyText: string): { idHex: string; bytes: Buffer } {
  const bad = (why: string): SignedNoteError => new SignedNoteError('NOTE_BAD_KEY', `malformed ${kind} key${isKeyName(name) ? ` '${name}'` : ''}: ${why}`, isKeyName(name) ? { name } : {});
  if (!isKeyName(name)) throw bad('the name is empty or holds a space, a plus or a control character');
  if (!/^[0-9a-fA-F]{8}$/.test(idHex)) throw bad('the key ID is not 8 hex digits');
  const key = strictBase64(keyText);
  if (!key || key.length === 0) throw bad('the key is not standard base64');
  if (key[0] !== ed25519) throw bad(`unknown algorithm 0x${key[0]!.toString(16).padStart(2, '0')} (only 0x01, Ed25519, is known)`);
  if (key.length !== 33) throw bad(`an Ed25519 key is 32 bytes, this one is ${key.length - 1}`);
  return { idHex: idHex.toLowerCase(), bytes: key.subarray(1) };
}

/** Parses `PRIVATE+KEY+<name>+<id>+<key>`; the key ID must be the one its public key gives. */
export function parseSignerKey(text: string): SignerKey {
  const [private1, rest1] = chop(text, '+');
  const [private2, rest2] = chop(rest1, '+');
  const [name, rest3] = chop(rest2, '+');
  const [idText, keyText] = chop(rest3, '+');
  if (private1 !== 'PRIVATE' || private2 !== 'KEY') throw new SignedNoteError('NOTE_BAD_KEY', 'malformed signer key: it reads PRIVATE+KEY+<name>+<key ID>+<key>');
  const { idHex, bytes } = keyMaterial('signer', name, idText, keyText);
  const privateKey = privateKeyOf(bytes);
  const publicKey = rawPublicKeyOf(privateKey);
  const keyId = keyIdOf(name, publicKey);
  if (keyId !== idHex) throw new SignedNoteError('NOTE_BAD_KEY', `the signer key '${name}' says key ID ${idHex}, its key gives ${keyId}`, { name, keyId: idHex });
  return { name, keyId, publicKey, privateKey };
}

/** Parses `<name>+<id>+<key>`; the key ID must be the one the key gives. */
export function parseVerifierKey(text: string): VerifierKey {
  const [name, rest] = chop(text, '+');
  const [idText, keyText] = chop(rest, '+');
  const { idHex, bytes } = keyMaterial('verifier', name, idText, keyText);
  const keyId = keyIdOf(name, bytes);
  if (keyId !== idHex) throw new SignedNoteError('NOTE_BAD_KEY', `the verifier key '${name}' says key ID ${idHex}, its key gives ${keyId}`, { name, keyId: idHex });
  const publicKey = Buffer.from(bytes);
  return { name, keyId, publicKey, key: createPublicKey({ key: Buffer.concat([spkiPrefix, publicKey]), format: 'der', type: 'spki' }) };
}

function verifierKeyString(name: string, publicKey: Buffer): string {
  return `${name}+${keyIdOf(name, publicKey)}+${Buffer.concat([Buffer.from([ed25519]), publicKey]).toString('base64')}`;
}

/** The verifier key (what auditors and witnesses are given) of a signer key. */
export function verifierKeyOf(signerKey: string): string {
  const signer = parseSignerKey(signerKey);
  return verifierKeyString(signer.name, signer.publicKey);
}

/** A new Ed25519 key pair for `name` (C2SP recommends a schema-less URL, such as the log's origin). */
export function generateSignerKey(name: string): { signerKey: string; verifierKey: string } {
  if (!isKeyName(name)) throw new SignedNoteError('NOTE_BAD_KEY', `a key name is non-empty, without spaces, '+' or control characters: '${name}'`);
  const seed = randomBytes(32);
  const publicKey = rawPublicKeyOf(privateKeyOf(seed));
  return {
    signerKey: `PRIVATE+KEY+${name}+${keyIdOf(name, publicKey)}+${Buffer.concat([Buffer.from([ed25519]), seed]).toString('base64')}`,
    verifierKey: verifierKeyString(name, publicKey),
  };
}

// --- Notes -------------------------------------------------------------------------------------------------------

interface SignatureLine extends NoteSigner {
  signature: Buffer;
  /** The line as it stands, without its newline: kept byte for byte when a co-signature is added. */
  line: string;
}

const malformed = (why: string, line?: number): SignedNoteError =>
  new SignedNoteError('NOTE_MALFORMED', `malformed note: ${why}`, line === undefined ? {} : { line });

/** UTF-8 bytes to text, refusing invalid UTF-8; a byte-order mark is kept (it is part of the signed text). */
function decodeNote(note: string | Uint8Array): string {
  if (typeof note === 'string') return note;
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(note);
  } catch {
    throw malformed('it is not valid UTF-8');
  }
}

/** Splits a signed note into its text and signature lines (golang.org/x/mod/sumdb/note Open, without verifying). */
function splitNote(note: string): { text: string; signatures: SignatureLine[] } {
  if (!isNoteText(note)) throw malformed('it holds a control character other than newline, or text with no UTF-8 encoding');
  // The text may hold empty lines: the last one separates it from the signatures.
  const at = note.lastIndexOf('\n\n');
  if (at < 0) throw malformed('there is no blank line before the signatures');
  const text = note.slice(0, at + 1);
  const block = note.slice(at + 2);
  if (block === '' || !block.endsWith('\n')) throw malformed('the signatures do not end in a newline');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > maxSignatures) throw malformed(`${lines.length} signatures, more than ${maxSignatures}`);
  const firstLine = text.split('\n').length + 1;
  const signatures = lines.map((line, i): SignatureLine => {
    if (!line.startsWith(signaturePrefix)) throw malformed(`line ${firstLine + i} is not a signature line ('— <name> <signature>')`, firstLine + i);
    const [name, encoded] = chop(line.slice(signaturePrefix.length), ' ');
    const bytes = strictBase64(encoded);
    if (!isKeyName(name) || !bytes || bytes.length < 5) throw malformed(`line ${firstLine + i} has a bad key name or signature`, firstLine + i);
    return { name, keyId: bytes.subarray(0, 4).toString('hex'), signature: bytes.subarray(4), line };
  });
  return { text, signatures };
}

function requireNoteText(text: string): void {
  if (!text.endsWith('\n')) throw malformed('the text must end in a newline');
  if (!isNoteText(text)) throw malformed('the text holds a control character other than newline, or text with no UTF-8 encoding');
}

/** Parses signer keys, refusing the same key twice. */
function signersOf(signerKeys: readonly string[]): SignerKey[] {
  const signers = signerKeys.map(parseSignerKey);
  signers.forEach((signer, i) => {
    if (signers.findIndex((other) => other.name === signer.name && other.keyId === signer.keyId) !== i) {
      throw new SignedNoteError('NOTE_BAD_KEY', `the key ${signer.name}+${signer.keyId} is given twice`, { name: signer.name, keyId: signer.keyId });
    }
  });
  return signers;
}

function signatureLine(message: Buffer, signer: SignerKey): string {
  const signature = sign(null, message, signer.privateKey);
  return `${signaturePrefix}${signer.name} ${Buffer.concat([Buffer.from(signer.keyId, 'hex'), signature]).toString('base64')}`;
}

function assemble(text: string, lines: readonly string[]): string {
  if (lines.length === 0) throw malformed('a signed note needs at least one signature');
  if (lines.length > maxSignatures) throw malformed(`${lines.length} signatures, more than ${maxSignatures}`);
  return `${text}\n${lines.map((line) => `${line}\n`).join('')}`;
}

/** Signs `text` (ending in a newline) with each signer key, in the order given. */
export function signNote(text: string, signerKeys: readonly string[]): string {
  requireNoteText(text);
  const message = Buffer.from(text, 'utf8');
  return assemble(
    text,
    signersOf(signerKeys).map((signer) => signatureLine(message, signer)),
  );
}

/**
 * Adds signatures to a signed note, after the ones it has (a witness co-signing a checkpoint). An existing signature
 * by one of the new keys is replaced, as Go's note.Sign does; the others are kept byte for byte. It does not verify
 * the existing signatures: open the note with the log's key first.
 */
export function addSignatures(note: string, signerKeys: readonly string[]): string {
  const { text, signatures } = splitNote(note);
  const signers = signersOf(signerKeys);
  const kept = signatures.filter((s) => !signers.some((signer) => signer.name === s.name && signer.keyId === s.keyId)).map((s) => s.line);
  const message = Buffer.from(text, 'utf8');
  return assemble(text, [...kept, ...signers.map((signer) => signatureLine(message, signer))]);
}

export interface OpenedNote {
  text: string;
  /** The known keys whose signatures verified, once each, in the note's order. */
  verified: NoteSigner[];
  /** The signatures by keys not given (other witnesses, rotated keys), once each: reported, not trusted. */
  unverified: NoteSigner[];
}

/**
 * Checks a signed note against known verifier keys (C2SP signed-note): a key is known by its name and key ID
 * together. Every signature by a known key must verify (NOTE_INVALID_SIGNATURE otherwise, even a repeated one, where
 * Go checks the first only); at least one must (NOTE_UNVERIFIED); a malformed note is NOTE_MALFORMED. The note may be
 * given as text or as its UTF-8 bytes (then invalid UTF-8 is refused, as Go does).
 */
export function openNote(note: string | Uint8Array, verifierKeys: readonly string[]): OpenedNote {
  const { text, signatures } = splitNote(decodeNote(note));
  const known = new Map<string, VerifierKey[]>();
  for (const verifier of verifierKeys.map(parseVerifierKey)) {
    const id = `${verifier.name}+${verifier.keyId}`;
    const same = known.get(id) ?? [];
    // The same key listed twice is one key; two different keys under one name and ID are ambiguous (below).
    if (!same.some((other) => other.publicKey.equals(verifier.publicKey))) known.set(id, [...same, verifier]);
  }
  const message = Buffer.from(text, 'utf8');
  const verified: NoteSigner[] = [];
  const unverified: NoteSigner[] = [];
  const once = (list: NoteSigner[], s: NoteSigner): void => {
    if (!list.some((other) => other.name === s.name && other.keyId === s.keyId)) list.push({ name: s.name, keyId: s.keyId });
  };
  for (const s of signatures) {
    const verifiers = known.get(`${s.name}+${s.keyId}`);
    if (!verifiers) {
      once(unverified, s);
      continue;
    }
    if (verifiers.length > 1) throw new SignedNoteError('NOTE_AMBIGUOUS_KEY', `ambiguous key ${s.name}+${s.keyId}: ${verifiers.length} different verifier keys have this name and key ID`, { name: s.name, keyId: s.keyId });
    if (!verify(null, message, verifiers[0]!.key, s.signature)) throw new SignedNoteError('NOTE_INVALID_SIGNATURE', `invalid signature for key ${s.name}+${s.keyId}`, { name: s.name, keyId: s.keyId });
    once(verified, s);
  }
  if (verified.length === 0) {
    const by = unverified.map((s) => `${s.name}+${s.keyId}`).join(', ');
    throw new SignedNoteError('NOTE_UNVERIFIED', `note has no verifiable signatures (signed by ${by}, none of them a known key)`, { unverified });
  }
  return { text, verified, unverified };
}

// --- Checkpoints -------------------------------------------------------------------------------------------------

export interface CheckpointBody {
  /** The log's identity, e.g. `example.com/log42`. */
  origin: string;
  /** The number of leaves. */
  size: number;
  /** The RFC 9162 root hash of the tree of `size` leaves (32 bytes). */
  rootHash: Uint8Array;
  /** Opaque extension lines, each non-empty. */
  extensions?: string[];
}

export interface ParsedCheckpoint extends CheckpointBody {
  rootHash: Buffer;
  extensions: string[];
}

const badCheckpoint = (why: string, line?: number): SignedNoteError =>
  new SignedNoteError('CHECKPOINT_MALFORMED', `malformed checkpoint: ${why}`, line === undefined ? {} : { line });

const isCheckpointLine = (line: string): boolean => line !== '' && !line.includes('\n') && isNoteText(line);

/** The tlog-checkpoint note text: origin, decimal size, base64 root hash, then the extension lines, each ending in a newline. */
export function formatCheckpoint(checkpoint: CheckpointBody): string {
  if (!isCheckpointLine(checkpoint.origin)) throw badCheckpoint('the origin is one non-empty line without control characters');
  if (!Number.isSafeInteger(checkpoint.size) || checkpoint.size < 0) throw badCheckpoint(`the size is an integer >= 0, got ${checkpoint.size}`);
  if (!(checkpoint.rootHash instanceof Uint8Array) || checkpoint.rootHash.length !== 32) throw badCheckpoint(`the root hash is 32 bytes, got ${checkpoint.rootHash?.length}`);
  const extensions = checkpoint.extensions ?? [];
  extensions.forEach((line, i) => {
    if (!isCheckpointLine(line)) throw badCheckpoint(`extension line ${i + 1} is empty or holds a newline or control character`, 4 + i);
  });
  const root = Buffer.from(checkpoint.rootHash.buffer, checkpoint.rootHash.byteOffset, checkpoint.rootHash.byteLength).toString('base64');
  return `${[checkpoint.origin, String(checkpoint.size), root, ...extensions].join('\n')}\n`;
}

/**
 * Reads a tlog-checkpoint note text strictly: at least three non-empty lines, each ending in a newline; the size in
 * decimal without leading zeroes; the root as canonical padded base64 of 32 bytes; no empty extension line.
 */
export function parseCheckpoint(text: string): ParsedCheckpoint {
  if (!text.endsWith('\n')) throw badCheckpoint('the text does not end in a newline');
  if (!isNoteText(text)) throw badCheckpoint('the text holds a control character other than newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw badCheckpoint(`it has ${lines.length} lines, not an origin, a size and a root hash`);
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  if (origin === '') throw badCheckpoint('the origin line is empty', 1);
  if (!/^(?:0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) throw badCheckpoint(`the size '${sizeText.slice(0, 40)}' is not a decimal integer without leading zeroes`, 2);
  const rootHash = strictBase64(rootText);
  if (!rootHash || rootHash.length !== 32 || rootHash.toString('base64') !== rootText) throw badCheckpoint('the root hash is not the standard base64 of 32 bytes', 3);
  extensions.forEach((line, i) => {
    if (line === '') throw badCheckpoint(`extension line ${i + 1} is empty`, 4 + i);
  });
  return { origin, size: Number(sizeText), rootHash, extensions };
}
