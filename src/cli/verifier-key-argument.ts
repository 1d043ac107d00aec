/**
 * A verifier key given on the command line (`--key`, `--log-key`): the key itself (`<name>+<id>+<key>`) or a file
 * holding it. A path that is not there is "key file not found", a file that does not hold a key says so once, naming
 * the file: never one "malformed verifier key" per checkpoint checked with a path taken for a key.
 */
import { existsSync } from 'node:fs';
import { parseVerifierKey } from '../../replay/checkpoint/index.js';
import { FileArgumentError, readFileArgument } from './file-argument.js';

function keyProblem(text: string): string | null {
  try {
    parseVerifierKey(text);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The verifier key `text` gives (itself, or the content of the file it names), checked. */
export function verifierKeyArgument(text: string, option: string): string {
  const role = { option, what: 'key file' };
  if (!existsSync(text)) {
    const literal = text.trim();
    if (keyProblem(literal) === null) return literal;
    // Neither a file nor a key: a key has the shape name+id+key, so a path-like text is a file that is missing.
    if (/^[^+\s]+\+[0-9a-fA-F]{8}\+\S+$/.test(literal)) throw new FileArgumentError('CLI_FILE_UNUSABLE', option, text, `${option}: not a valid verifier key: ${keyProblem(literal)}`);
    throw new FileArgumentError('CLI_FILE_NOT_FOUND', option, text, `${option} ${text}: key file not found (ENOENT), and it is not a verifier key (<name>+<id>+<key>) either`);
  }
  const key = readFileArgument(text, role).trim();
  const problem = keyProblem(key);
  if (problem !== null) throw new FileArgumentError('CLI_FILE_UNUSABLE', option, text, `${option} ${text}: the file does not hold a verifier key (<name>+<id>+<key>): ${problem}`);
  return key;
}
