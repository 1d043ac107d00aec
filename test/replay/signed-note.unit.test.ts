import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addSignatures,
  formatCheckpoint,
  generateSignerKey,
  openNote,
  parseCheckpoint,
  parseSignerKey,
  parseVerifierKey,
  SignedNoteError,
  signNote,
  verifierKeyOf,
} from '../../replay/checkpoint/signed-note.js';

/**
 * The published vectors of golang.org/x/mod/sumdb/note: repository golang/mod, sumdb/note/note_test.go (TestNewSigner,
 * TestNewVerifier, TestSign, TestOpen), copied byte for byte.
 */
const go = {
  peterSigner: 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz',
  peterVerifier: 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW',
  enochVerifier: 'EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop',
  text: "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n",
  peterSig: '\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n',
  enochSig: '\u2014 EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n',
  /** TestNewVerifier: a key of the wrong length, and an unknown algorithm, each with its key hash adjusted to match. */
  wrongLength: 'PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==',
  unknownAlgorithm: 'PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW',
};
const peter = { name: 'PeterNeumann', keyId: 'c74f20a3' };
const enoch = { name: 'EnochRoot', keyId: 'af0cfe78' };

/**
 * The examples of the C2SP specifications (C2SP/C2SP, signed-note.md and tlog-checkpoint.md). Their keys are not
 * published, so they can only be parsed, not verified.
 */
const c2sp = {
  poem: 'Ognuno sta solo sul cuor della terra\ntrafitto da un raggio di sole:\n\ned è subito sera.\n',
  poemSig: '\u2014 quasimodo.example/salvatore NnugSzTjtVAewIS+Z/iJhUPeFDkO/5QQ2i5ddnGITLlC+EhfLW9oJKONrMouFSQU0xMcXxj99ihAQwaqP3ZekRwNtIc=\n',
  checkpoint: 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n',
  checkpointSig: '\u2014 example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n',
};

function caught(run: () => unknown): SignedNoteError {
  try {
    run();
  } catch (error) {
    if (error instanceof SignedNoteError) return error;
    throw error;
  }
  throw new Error('expected a SignedNoteError');
}

/** Every proper substring and every one-character increment of a key: Go's mangling tests. */
function manglings(key: string): string[] {
  const out: string[] = [];
  for (let i = 0; i <= key.length; i++) for (let j = i + 1; j <= key.length; j++) if (i !== 0 || j !== key.length) out.push(key.slice(i, j));
  for (let i = 0; i < key.length; i++) out.push(key.slice(0, i) + String.fromCharCode(key.charCodeAt(i) + 1) + key.slice(i + 1));
  return out;
}

describe('signed notes are byte-compatible with Go sumdb/note', () => {
  it("reproduces Go's key IDs, verifier key and signature byte for byte", () => {
    expect(parseSignerKey(go.peterSigner)).toMatchObject(peter);
    expect(parseVerifierKey(go.peterVerifier)).toMatchObject(peter);
    expect(parseVerifierKey(go.enochVerifier)).toMatchObject(enoch);
    expect(verifierKeyOf(go.peterSigner)).toBe(go.peterVerifier);
    expect(signNote(go.text, [go.peterSigner])).toBe(`${go.text}\n${go.peterSig}`);
    // TestSign: signing again replaces the key's own signature instead of adding a second one.
    expect(addSignatures(`${go.text}\n${go.peterSig}`, [go.peterSigner])).toBe(`${go.text}\n${go.peterSig}`);
  });

  it("opens Go's notes as Go does: known keys verified, unknown keys reported, no known key refused", () => {
    const note = `${go.text}\n${go.peterSig}${go.enochSig}`;
    expect(openNote(note, [go.peterVerifier])).toEqual({ text: go.text, verified: [peter], unverified: [enoch] });
    expect(openNote(note, [go.peterVerifier, go.enochVerifier])).toEqual({ text: go.text, verified: [peter, enoch], unverified: [] });
    expect(openNote(Buffer.from(note, 'utf8'), [go.peterVerifier]).verified).toEqual([peter]);
    const none = caught(() => openNote(note, []));
    expect(none).toMatchObject({ code: 'NOTE_UNVERIFIED', data: { unverified: [peter, enoch] } });
    expect(none.message).toMatch(/note has no verifiable signatures/);
    // Repeated signatures are reported once; an unknown key's signatures are never checked.
    const repeated = `${go.text}\n${go.peterSig}${go.peterSig}${go.enochSig}${go.enochSig}${go.enochSig.slice(0, 60)}ABCD${go.enochSig.slice(60)}`;
    expect(openNote(repeated, [go.peterVerifier])).toEqual({ text: go.text, verified: [peter], unverified: [enoch] });
    // The same key listed twice is one key, used or not.
    expect(openNote(`${go.text}\n${go.peterSig}`, [go.enochVerifier, go.peterVerifier, go.enochVerifier]).verified).toEqual([peter]);
  });

  it("refuses Go's malformed notes, and more than 100 signatures, as malformed", () => {
    const bad: Array<string | Buffer> = [
      go.text,
      `${go.text}\n`,
      `${go.text}\n${go.peterSig.slice(0, -1)}`,
      `\x01${go.text}\n${go.peterSig}`,
      Buffer.concat([Buffer.from([0xff]), Buffer.from(`${go.text}\n${go.peterSig}`)]),
      `${go.text}\n\u2014 Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=`,
      `${go.text}\n${go.peterSig}Unexpected line.\n`,
      `${go.text}\n${go.peterSig.repeat(101)}`,
      `${go.text}\n${go.peterSig.replace('\u2014 ', '- ')}`,
      `${go.text}\n${go.peterSig.replace('AM=\n', 'AM=\r\n')}`,
      `${go.text}\n\u2014 PeterNeumann\n`,
      `${go.text}\n\u2014 PeterNeumann x08g\n`,
      `\ud800${go.text}\n${go.peterSig}`,
    ];
    for (const note of bad) {
      expect(caught(() => openNote(note, [go.peterVerifier])).code).toBe('NOTE_MALFORMED');
    }
    expect(openNote(`${go.text}\n${go.peterSig.repeat(100)}`, [go.peterVerifier]).verified).toEqual([peter]);
  });

  it("refuses every mangling of Go's signer and verifier keys (each substring, each character changed), by code", () => {
    for (const key of manglings(go.peterVerifier)) expect(caught(() => parseVerifierKey(key)).code, key).toBe('NOTE_BAD_KEY');
    for (const key of manglings(go.peterSigner)) expect(caught(() => parseSignerKey(key)).code, key).toBe('NOTE_BAD_KEY');
    expect(caught(() => parseVerifierKey(go.wrongLength)).message).toMatch(/32 bytes/);
    expect(caught(() => parseVerifierKey(go.unknownAlgorithm)).message).toMatch(/unknown algorithm 0x65/);
    const mismatch = caught(() => parseVerifierKey(go.peterVerifier.replace('c74f20a3', 'c74f20a4')));
    expect(mismatch).toMatchObject({ code: 'NOTE_BAD_KEY', data: { name: 'PeterNeumann', keyId: 'c74f20a4' } });
    // A signer key's errors never quote its private key.
    const seed = go.peterSigner.split('+').slice(4).join('+');
    for (const key of manglings(go.peterSigner).slice(-40)) expect(caught(() => parseSignerKey(key)).message).not.toContain(seed.slice(0, 12));
  });
});

describe('signed notes: signing, co-signing and tampering', () => {
  it('a note signed with a generated key opens with its verifier key, and the verifier key follows from the signer key', () => {
    const log = generateSignerKey('fleet-ledger.example/log');
    expect(verifierKeyOf(log.signerKey)).toBe(log.verifierKey);
    expect(parseSignerKey(log.signerKey).keyId).toBe(parseVerifierKey(log.verifierKey).keyId);
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme' }).filter((line) => !/[\x00-\x1f]/.test(line)), { minLength: 1, maxLength: 6 }), (lines) => {
        const text = `${lines.join('\n')}\n`;
        const note = signNote(text, [log.signerKey]);
        expect(openNote(note, [log.verifierKey])).toEqual({ text, verified: [{ name: 'fleet-ledger.example/log', keyId: log.verifierKey.split('+')[1] }], unverified: [] });
        expect(openNote(Buffer.from(note, 'utf8'), [log.verifierKey]).text).toBe(text);
      }),
      { numRuns: 100 },
    );
  });

  it('a witness co-signature is added after the log signature, keeps it byte for byte, and both verify', () => {
    const log = generateSignerKey('fleet-ledger.example/log');
    const witness = generateSignerKey('witness.example/w1');
    const body = formatCheckpoint({ origin: 'fleet-ledger.example/log', size: 42, rootHash: Buffer.alloc(32, 7), extensions: ['time 2026-12-03T00:00:00.000Z'] });
    const signed = signNote(body, [log.signerKey]);
    const cosigned = addSignatures(signed, [witness.signerKey]);
    expect(cosigned.startsWith(signed)).toBe(true);
    expect(openNote(cosigned, [log.verifierKey, witness.verifierKey]).verified.map((s) => s.name)).toEqual(['fleet-ledger.example/log', 'witness.example/w1']);
    // The log's own reader needs only the log's key; the witness is reported, not trusted.
    const opened = openNote(cosigned, [log.verifierKey]);
    expect(opened.unverified.map((s) => s.name)).toEqual(['witness.example/w1']);
    expect(parseCheckpoint(opened.text)).toEqual({ origin: 'fleet-ledger.example/log', size: 42, rootHash: Buffer.alloc(32, 7), extensions: ['time 2026-12-03T00:00:00.000Z'] });
    // Co-signing twice keeps one signature per key.
    expect(addSignatures(cosigned, [witness.signerKey])).toBe(cosigned);
    expect(caught(() => signNote(body, [log.signerKey, log.signerKey])).code).toBe('NOTE_BAD_KEY');
  });

  it('a changed text, signature, key name or key ID in a signed note is detected', () => {
    const note = `${go.text}\n${go.peterSig}`;
    const textChanged = caught(() => openNote(note.replace('problem', 'Problem'), [go.peterVerifier]));
    expect(textChanged).toMatchObject({ code: 'NOTE_INVALID_SIGNATURE', data: peter });
    expect(textChanged.message).toBe('invalid signature for key PeterNeumann+c74f20a3');
    expect(caught(() => openNote(`${go.text}\n${go.peterSig.slice(0, 60)}ABCD${go.peterSig.slice(60)}`, [go.peterVerifier])).code).toBe('NOTE_INVALID_SIGNATURE');
    const signature = Buffer.from(go.peterSig.trim().split(' ')[2]!, 'base64');
    for (let bit = 32; bit < signature.length * 8; bit += 29) {
      const altered = Buffer.from(signature);
      altered[bit >> 3] = altered[bit >> 3]! ^ (1 << (bit & 7));
      expect(caught(() => openNote(`${go.text}\n\u2014 PeterNeumann ${altered.toString('base64')}\n`, [go.peterVerifier])).code).toBe('NOTE_INVALID_SIGNATURE');
    }
    // Another name or key ID is another key: unknown, so the note has no signature by the known one.
    expect(caught(() => openNote(note.replace('\u2014 PeterNeumann', '\u2014 PeterNeuman'), [go.peterVerifier])).data.unverified).toEqual([{ name: 'PeterNeuman', keyId: 'c74f20a3' }]);
    const otherId = Buffer.from(signature);
    otherId[3] = otherId[3]! ^ 1;
    expect(caught(() => openNote(`${go.text}\n\u2014 PeterNeumann ${otherId.toString('base64')}\n`, [go.peterVerifier])).data.unverified).toEqual([{ name: 'PeterNeumann', keyId: 'c74f20a2' }]);
    // A signature added by a known key that does not verify spoils the whole note, even beside a valid one.
    expect(caught(() => openNote(`${go.text}\n${go.peterSig}${go.peterSig.slice(0, 60)}ABCD${go.peterSig.slice(60)}`, [go.peterVerifier])).code).toBe('NOTE_INVALID_SIGNATURE');
  });

  it('two different keys under one name and key ID are refused as ambiguous when a signature names them', () => {
    // Key IDs are 32 bits, so a collision takes about 2^16 tries: these two public keys (SHA-256 of
    // 'fleet-ledger key ID collision 31756' and '... 89357') share the key ID 2b304fd6 under this name.
    const first = 'collision.example+2b304fd6+Aac0COVHMGqP2JCH9MYtbOEcnBEJgeNrOoOeD6a8tMBL';
    const second = 'collision.example+2b304fd6+AY4GOYI2Yvb8MTXrSq9c5Dfk1vrjHqZvvYGPKbWTmb4t';
    expect(parseVerifierKey(first).keyId).toBe(parseVerifierKey(second).keyId);
    const note = `${go.text}\n\u2014 collision.example ${Buffer.concat([Buffer.from('2b304fd6', 'hex'), Buffer.alloc(64)]).toString('base64')}\n`;
    expect(caught(() => openNote(note, [first, second]))).toMatchObject({ code: 'NOTE_AMBIGUOUS_KEY', data: { name: 'collision.example', keyId: '2b304fd6' } });
    expect(caught(() => openNote(note, [first])).code).toBe('NOTE_INVALID_SIGNATURE');
    // Unused, the ambiguity is harmless (as in Go).
    expect(openNote(`${go.text}\n${go.peterSig}`, [first, second, go.peterVerifier]).verified).toEqual([peter]);
    // A key that claims another key's ID is refused before it can be ambiguous.
    const claimed = second.replace('+AY4', '+AY5');
    expect(caught(() => parseVerifierKey(claimed)).code).toBe('NOTE_BAD_KEY');
  });

  it('a note text may hold empty lines: the last blank line separates the signatures (the C2SP example)', () => {
    const example = `${c2sp.poem}\n${c2sp.poemSig}`;
    expect(caught(() => openNote(example, [])).data.unverified).toEqual([{ name: 'quasimodo.example/salvatore', keyId: '367ba04b' }]);
    const mine = generateSignerKey('reader.example');
    const cosigned = addSignatures(example, [mine.signerKey]);
    expect(openNote(cosigned, [mine.verifierKey])).toEqual({ text: c2sp.poem, verified: [{ name: 'reader.example', keyId: mine.verifierKey.split('+')[1] }], unverified: [{ name: 'quasimodo.example/salvatore', keyId: '367ba04b' }] });
    expect(signNote(c2sp.poem, [mine.signerKey]).startsWith(`${c2sp.poem}\n\u2014 reader.example `)).toBe(true);
  });

  it('a note that could not be opened is never produced: text without a final newline or with control characters, bad key names, no signer', () => {
    const key = generateSignerKey('log.example').signerKey;
    expect(caught(() => signNote('no newline', [key])).code).toBe('NOTE_MALFORMED');
    expect(caught(() => signNote('a\tb\n', [key])).code).toBe('NOTE_MALFORMED');
    expect(caught(() => signNote('a\r\n', [key])).code).toBe('NOTE_MALFORMED');
    expect(caught(() => signNote(go.text, [])).code).toBe('NOTE_MALFORMED');
    for (const name of ['', 'with space', 'with+plus', 'nbsp\u00a0name', 'tab\tname', 'ideographic\u3000space']) {
      expect(caught(() => generateSignerKey(name)).code).toBe('NOTE_BAD_KEY');
    }
    expect(generateSignerKey('ünïcödé.example/😀').verifierKey.startsWith('ünïcödé.example/😀+')).toBe(true);
  });
});

describe('tlog-checkpoint bodies', () => {
  it('reads the C2SP example checkpoint and reports its unknown signer', () => {
    expect(parseCheckpoint(c2sp.checkpoint)).toEqual({
      origin: 'example.com/behind-the-sofa',
      size: 20852163,
      rootHash: Buffer.from('0ac5186a91863e8e1d90c808014aa89bf5da8e3ee1d9f07630f0378f68f1ab62', 'hex'),
      extensions: [],
    });
    expect(formatCheckpoint(parseCheckpoint(c2sp.checkpoint))).toBe(c2sp.checkpoint);
    expect(caught(() => openNote(`${c2sp.checkpoint}\n${c2sp.checkpointSig}`, [])).data.unverified).toEqual([{ name: 'example.com/behind-the-sofa', keyId: '033de0ae' }]);
  });

  it('formatting then parsing gives back the checkpoint, for all origins, sizes, roots and extension lines', () => {
    const line = fc.string({ minLength: 1, unit: 'grapheme' }).filter((s) => !/[\x00-\x1f]/.test(s));
    fc.assert(
      fc.property(line, fc.nat({ max: Number.MAX_SAFE_INTEGER }), fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.array(line, { maxLength: 4 }), (origin, size, root, extensions) => {
        const text = formatCheckpoint({ origin, size, rootHash: root, extensions });
        expect(parseCheckpoint(text)).toEqual({ origin, size, rootHash: Buffer.from(root), extensions });
      }),
      { numRuns: 300 },
    );
  });

  it('anything but origin, decimal size, canonical base64 root and non-empty extension lines is refused by code, with the line', () => {
    const root = Buffer.alloc(32, 1).toString('base64');
    const cases: Array<[string, number | undefined]> = [
      [`origin\n12\n${root}`, undefined],
      ['origin\n12\n', undefined],
      [`\n12\n${root}\n`, 1],
      [`origin\n012\n${root}\n`, 2],
      [`origin\n-1\n${root}\n`, 2],
      [`origin\n1e3\n${root}\n`, 2],
      [`origin\n 12\n${root}\n`, 2],
      [`origin\n9007199254740992\n${root}\n`, 2],
      ['origin\n12\nAAAA\n', 3],
      [`origin\n12\n${root.slice(0, -1)}\n`, 3],
      [`origin\n12\n${Buffer.alloc(32, 1).toString('base64url')}\n`, 3],
      [`origin\n12\n${root.slice(0, -2)}F=\n`, 3],
      [`origin\n12\n${root}\n\n`, 4],
      [`origin\n12\n${root}\next\n\nmore\n`, 5],
      [`origin\r\n12\n${root}\n`, undefined],
    ];
    for (const [text, line] of cases) {
      const error = caught(() => parseCheckpoint(text));
      expect(error.code, JSON.stringify(text)).toBe('CHECKPOINT_MALFORMED');
      expect(error.data.line, JSON.stringify(text)).toBe(line);
    }
    expect(caught(() => formatCheckpoint({ origin: 'o', size: -1, rootHash: Buffer.alloc(32) })).message).toMatch(/size is an integer >= 0, got -1/);
    expect(caught(() => formatCheckpoint({ origin: 'o', size: 1.5, rootHash: Buffer.alloc(32) })).code).toBe('CHECKPOINT_MALFORMED');
    expect(caught(() => formatCheckpoint({ origin: '', size: 1, rootHash: Buffer.alloc(32) })).code).toBe('CHECKPOINT_MALFORMED');
    expect(caught(() => formatCheckpoint({ origin: 'two\nlines', size: 1, rootHash: Buffer.alloc(32) })).code).toBe('CHECKPOINT_MALFORMED');
    expect(caught(() => formatCheckpoint({ origin: 'o', size: 1, rootHash: Buffer.alloc(31) })).message).toMatch(/32 bytes, got 31/);
    expect(caught(() => formatCheckpoint({ origin: 'o', size: 1, rootHash: Buffer.alloc(32), extensions: [''] })).data.line).toBe(4);
  });
});
