import { describe, expect, it } from 'vitest';
import { addSignatures, formatCheckpoint, generateSignerKey, openNote, parseCheckpoint, parseVerifierKey, signNote, verifierKeyOf } from '../../replay/checkpoint/signed-note.js';

// The published vectors of golang.org/x/mod/sumdb/note (sumdb/note/note_test.go in the golang/mod repository).
const peterSigner = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const peterVerifier = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const enochVerifier = 'EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop';
const text = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const peterSig = '\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';
const enochSig = '\u2014 EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n';

describe('C2SP signed notes, byte-compatible with Go sumdb/note', () => {
  it("reproduces Go's signer, verifier key and signature byte for byte", () => {
    expect(verifierKeyOf(peterSigner)).toBe(peterVerifier);
    expect(signNote(text, [peterSigner])).toBe(`${text}\n${peterSig}`);
  });

  it('verifies the signatures of known keys, reports unknown ones, and refuses a note no known key signed', () => {
    const note = `${text}\n${peterSig}${enochSig}`;
    expect(openNote(note, [peterVerifier])).toMatchObject({ text, verified: [{ name: 'PeterNeumann', keyId: 'c74f20a3' }], unverified: [{ name: 'EnochRoot', keyId: 'af0cfe78' }] });
    expect(openNote(note, [peterVerifier, enochVerifier]).verified).toHaveLength(2);
    expect(() => openNote(note, [])).toThrow(/no verifiable signatures/);
  });

  it('refuses a changed text, a changed signature, a mangled key and a malformed note', () => {
    expect(() => openNote(`${text.replace('problem', 'Problem')}\n${peterSig}`, [peterVerifier])).toThrow(/invalid signature for key PeterNeumann\+c74f20a3/);
    expect(() => openNote(`${text}\n${peterSig.slice(0, 60)}ABCD${peterSig.slice(60)}`, [peterVerifier])).toThrow(/invalid signature/);
    expect(() => parseVerifierKey(peterVerifier.replace('c74f20a3', 'c74f20a4'))).toThrow(/does not match/);
    expect(() => parseVerifierKey(peterVerifier.slice(0, -2))).toThrow(/malformed/);
    for (const bad of [text, `${text}\n`, `${text}\n${peterSig.slice(0, -1)}`, `${text}\n${peterSig}Unexpected line.\n`, `${text}\n${'\u2014'} Bad Name x08g=\n`]) {
      expect(() => openNote(bad, [peterVerifier])).toThrow(/malformed note/);
    }
  });

  it('a witness co-signature is added beside the log signature, and both verify', () => {
    const log = generateSignerKey('fleet-ledger/example');
    const witness = generateSignerKey('witness-a');
    const checkpoint = formatCheckpoint({ origin: 'fleet-ledger/example', size: 42, rootHash: Buffer.alloc(32, 7), extensions: ['time 2026-12-03T00:00:00.000Z'] });
    const cosigned = addSignatures(signNote(checkpoint, [log.signerKey]), [witness.signerKey]);
    expect(openNote(cosigned, [log.verifierKey, witness.verifierKey]).verified.map((v) => v.name)).toEqual(['fleet-ledger/example', 'witness-a']);
    expect(parseCheckpoint(openNote(cosigned, [log.verifierKey]).text)).toMatchObject({ origin: 'fleet-ledger/example', size: 42, extensions: ['time 2026-12-03T00:00:00.000Z'] });
  });

  it('a checkpoint body is origin, decimal size, base64 root: anything else is refused by name', () => {
    expect(() => parseCheckpoint('origin\n012\nAAAA\n')).toThrow(/malformed checkpoint/);
    expect(() => parseCheckpoint('origin\n12\n')).toThrow(/origin, a size and a root/);
    expect(() => formatCheckpoint({ origin: 'o', size: -1, rootHash: Buffer.alloc(32) })).toThrow(/non-negative/);
  });
});
