/**
 * C2SP signed notes (https://c2sp.org/signed-note) with Ed25519 keys, and the tlog-checkpoint body they carry
 * (https://c2sp.org/tlog-checkpoint): the format of Go's sumdb, Sigstore's Rekor v2, Trillian Tessera and the
 * transparency-log witnesses, so their tooling reads our checkpoints. Byte-compatible with golang.org/x/mod/sumdb/note
 * (its published test vectors are in test/replay/signed-note.unit.test.ts).
 *
 * - key id: the first 4 bytes of SHA-256(name || 0x0A || 0x01 || 32-byte public key);
 * - verifier key `<name>+<8 hex id>+<base64(0x01 || public key)>`; signer key `PRIVATE+KEY+<name>+<id>+<base64(0x01 || seed)>`;
 * - note: text (ending in a newline), a blank line, then lines `— <name> <base64(key id || signature)>`.
 */
import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, verify, type KeyObject } from 'node:crypto';

export class SignedNoteError extends Error {
  constructor(
    readonly code: 'NOTE_MALFORMED' | 'NOTE_BAD_KEY' | 'NOTE_INVALID_SIGNATURE' | 'NOTE_UNVERIFIED' | 'CHECKPOINT_MALFORMED',
    message: string,
  ) {
    super(message);
    this.name = 'SignedNoteError';
  }
}

const ed25519 = 0x01;
const pkcs8Prefix = Buffer.from('302e020100300506032b657004220420', 'hex');
const spkiPrefix = Buffer.from('302a300506032b6570032100', 'hex');
const dash = '\u2014 ';

function validName(name: string): boolean {
  return name.length > 0 && !/[\s+]/.test(name) && /^[\x21-\x7e\u00a0-\uffff]+$/u.test(name);
}

function keyId(name: string, publicKey: Buffer): Buffer {
  return createHash('sha256').update(name).update(Buffer.from([0x0a, ed25519])).update(publicKey).digest().subarray(0, 4);
}

function privateKeyOf(seed: Buffer): KeyObject {
  return createPrivateKey({ key: Buffer.concat([pkcs8Prefix, seed]), format: 'der', type: 'pkcs8' });
}

function publicKeyBytes(privateKey: KeyObject): Buffer {
  return Buffer.from(createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32));
}

export interface SignerKey {
  name: string;
  id: Buffer;
  privateKey: KeyObject;
  publicKey: Buffer;
}

export interface VerifierKey {
  name: string;
  id: Buffer;
  publicKey: KeyObject;
}

const strictBase64 = (text: string): Buffer | null => {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return null;
  return Buffer.from(text, 'base64');
};

/** Splits on the first `count - 1` pluses: the base64 key at the end may hold '+' itself. */
function cut(text: string, count: number): string[] {
  const parts: string[] = [];
  let rest = text;
  for (let i = 0; i < count - 1; i++) {
    const at = rest.indexOf('+');
    if (at < 0) return [...parts, rest];
    parts.push(rest.slice(0, at));
    rest = rest.slice(at + 1);
  }
  return [...parts, rest];
}

export function parseSignerKey(text: string): SignerKey {
  const parts = cut(text.trim(), 5);
  if (parts.length !== 5 || parts[0] !== 'PRIVATE' || parts[1] !== 'KEY') throw new SignedNoteError('NOTE_BAD_KEY', 'a signer key reads PRIVATE+KEY+<name>+<id>+<key>');
  const [, , name, idHex, keyText] = parts as [string, string, string, string, string];
  const key = strictBase64(keyText);
  if (!validName(name) || !/^[0-9a-f]{8}$/.test(idHex) || !key || key.length !== 33 || key[0] !== ed25519) throw new SignedNoteError('NOTE_BAD_KEY', `malformed signer key for '${name}'`);
  const privateKey = privateKeyOf(key.subarray(1));
  const publicKey = publicKeyBytes(privateKey);
  const id = keyId(name, publicKey);
  if (id.toString('hex') !== idHex) throw new SignedNoteError('NOTE_BAD_KEY', `the signer key's id ${idHex} does not match its key (${id.toString('hex')})`);
  return { name, id, privateKey, publicKey };
}

export function parseVerifierKey(text: string): VerifierKey {
  const parts = cut(text.trim(), 3);
  if (parts.length !== 3) throw new SignedNoteError('NOTE_BAD_KEY', 'a verifier key reads <name>+<id>+<key>');
  const [name, idHex, keyText] = parts as [string, string, string];
  const key = strictBase64(keyText);
  if (!validName(name) || !/^[0-9a-f]{8}$/.test(idHex) || !key || key.length !== 33 || key[0] !== ed25519) throw new SignedNoteError('NOTE_BAD_KEY', `malformed verifier key for '${name}'`);
  const raw = key.subarray(1);
  const id = keyId(name, raw);
  if (id.toString('hex') !== idHex) throw new SignedNoteError('NOTE_BAD_KEY', `the verifier key's id ${idHex} does not match its key (${id.toString('hex')})`);
  return { name, id, publicKey: createPublicKey({ key: Buffer.concat([spkiPrefix, raw]), format: 'der', type: 'spki' }) };
}

function verifierString(name: string, publicKey: Buffer): string {
  return `${name}+${keyId(name, publicKey).toString('hex')}+${Buffer.concat([Buffer.from([ed25519]), publicKey]).toString('base64')}`;
}

export function verifierKeyOf(signerKey: string): string {
  const signer = parseSignerKey(signerKey);
  return verifierString(signer.name, signer.publicKey);
}

export function generateSignerKey(name: string): { signerKey: string; verifierKey: string } {
  if (!validName(name)) throw new SignedNoteError('NOTE_BAD_KEY', `a key name has no spaces or '+': '${name}'`);
  const seed = randomBytes(32);
  const publicKey = publicKeyBytes(privateKeyOf(seed));
  const id = keyId(name, publicKey).toString('hex');
  return {
    signerKey: `PRIVATE+KEY+${name}+${id}+${Buffer.concat([Buffer.from([ed25519]), seed]).toString('base64')}`,
    verifierKey: verifierString(name, publicKey),
  };
}

interface SignatureLine {
  name: string;
  id: Buffer;
  signature: Buffer;
  line: string;
}

function splitNote(note: string): { text: string; signatures: SignatureLine[] } {
  const malformed = (why: string): SignedNoteError => new SignedNoteError('NOTE_MALFORMED', `malformed note: ${why}`);
  if (!note.endsWith('\n')) throw malformed('it does not end in a newline');
  const at = note.lastIndexOf('\n\n');
  if (at < 0) throw malformed('no blank line before the signatures');
  const text = note.slice(0, at + 1);
  if (/[\x00-\x09\x0b-\x1f\x7f]/.test(text) || text.includes('\uFFFD')) throw malformed('the text holds control characters');
  const lines = note.slice(at + 2, -1).split('\n');
  if (lines.length > 100) throw malformed('more than 100 signatures');
  const signatures = lines.map((line) => {
    if (!line.startsWith(dash)) throw malformed(`'${line.slice(0, 40)}' is not a signature line`);
    const [name, encoded, extra] = line.slice(dash.length).split(' ');
    const bytes = encoded ? strictBase64(encoded) : null;
    if (extra !== undefined || !name || !validName(name) || !bytes || bytes.length < 5) throw malformed(`bad signature line '${line.slice(0, 40)}'`);
    return { name, id: bytes.subarray(0, 4), signature: bytes.subarray(4), line };
  });
  return { text, signatures };
}

function signatureLine(text: string, signer: SignerKey): string {
  const signature = sign(null, Buffer.from(text, 'utf8'), signer.privateKey);
  return `${dash}${signer.name} ${Buffer.concat([signer.id, signature]).toString('base64')}`;
}

/** Signs `text` (which must end in a newline) with each key. */
export function signNote(text: string, signerKeys: readonly string[]): string {
  if (!text.endsWith('\n') || text.includes('\n\n')) throw new SignedNoteError('NOTE_MALFORMED', 'malformed note: the text must end in one newline and hold no blank line');
  return `${text}\n${signerKeys.map((key) => `${signatureLine(text, parseSignerKey(key))}\n`).join('')}`;
}

/** Adds signatures to a signed note, keeping the ones it has (a witness co-signing; a key's old line is replaced). */
export function addSignatures(note: string, signerKeys: readonly string[]): string {
  const { text, signatures } = splitNote(note);
  const signers = signerKeys.map(parseSignerKey);
  const kept = signatures.filter((s) => !signers.some((signer) => signer.name === s.name && signer.id.equals(s.id)));
  return `${text}\n${[...kept.map((s) => s.line), ...signers.map((signer) => signatureLine(text, signer))].map((line) => `${line}\n`).join('')}`;
}

export interface OpenedNote {
  text: string;
  verified: Array<{ name: string; keyId: string }>;
  unverified: Array<{ name: string; keyId: string }>;
}

/**
 * Checks a signed note against known verifier keys: a signature by a known key that does not verify, or no verified
 * signature at all, is an error; signatures by unknown keys are reported, not trusted.
 */
export function openNote(note: string, verifierKeys: readonly string[]): OpenedNote {
  const { text, signatures } = splitNote(note);
  const verifiers = verifierKeys.map(parseVerifierKey);
  const verified: OpenedNote['verified'] = [];
  const unverified: OpenedNote['unverified'] = [];
  const message = Buffer.from(text, 'utf8');
  for (const signature of signatures) {
    const keyIdHex = signature.id.toString('hex');
    const verifier = verifiers.find((v) => v.name === signature.name && v.id.equals(signature.id));
    if (!verifier) {
      unverified.push({ name: signature.name, keyId: keyIdHex });
      continue;
    }
    if (!verify(null, message, verifier.publicKey, signature.signature)) throw new SignedNoteError('NOTE_INVALID_SIGNATURE', `invalid signature for key ${signature.name}+${keyIdHex}`);
    if (!verified.some((v) => v.name === signature.name && v.keyId === keyIdHex)) verified.push({ name: signature.name, keyId: keyIdHex });
  }
  if (verified.length === 0) throw new SignedNoteError('NOTE_UNVERIFIED', `note has no verifiable signatures (signed by ${signatures.map((s) => s.name).join(', ') || 'nobody'})`);
  return { text, verified, unverified };
}

export interface CheckpointBody {
  origin: string;
  size: number;
  rootHash: Buffer;
  extensions?: string[];
}

/** The tlog-checkpoint body: origin, decimal size, base64 root, then any extension lines. */
export function formatCheckpoint(checkpoint: CheckpointBody): string {
  if (!checkpoint.origin || /\n/.test(checkpoint.origin)) throw new SignedNoteError('CHECKPOINT_MALFORMED', 'a checkpoint origin is one non-empty line');
  if (!Number.isSafeInteger(checkpoint.size) || checkpoint.size < 0) throw new SignedNoteError('CHECKPOINT_MALFORMED', `a checkpoint size is a non-negative integer, got ${checkpoint.size}`);
  if (checkpoint.rootHash.length !== 32) throw new SignedNoteError('CHECKPOINT_MALFORMED', 'a checkpoint root is 32 bytes');
  const extensions = checkpoint.extensions ?? [];
  if (extensions.some((line) => line === '' || line.includes('\n'))) throw new SignedNoteError('CHECKPOINT_MALFORMED', 'extension lines are non-empty single lines');
  return `${[checkpoint.origin, String(checkpoint.size), checkpoint.rootHash.toString('base64'), ...extensions].join('\n')}\n`;
}

export function parseCheckpoint(text: string): CheckpointBody {
  const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : null;
  if (!lines || lines.length < 3) throw new SignedNoteError('CHECKPOINT_MALFORMED', 'a checkpoint has an origin, a size and a root line');
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  const root = strictBase64(rootText);
  if (!origin || !/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText)) || !root || root.length !== 32) {
    throw new SignedNoteError('CHECKPOINT_MALFORMED', `malformed checkpoint (origin '${origin}', size '${sizeText}')`);
  }
  return { origin, size: Number(sizeText), rootHash: root, extensions };
}
