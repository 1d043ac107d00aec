/**
 * Where the shared hardware captures are: `FLEET_LEDGER_FIXTURES` when set, else `<repo>/../shared/fixtures`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const fixturesDir: string = process.env.FLEET_LEDGER_FIXTURES ?? fileURLToPath(new URL('../../../../shared/fixtures/', import.meta.url));

export function fixturePath(...parts: string[]): string {
  return join(fixturesDir, ...parts);
}

export function readFixture(...parts: string[]): string {
  return readFileSync(fixturePath(...parts), 'utf8');
}

/** The block of a nvidia_gpu_exporter capture that follows `# $ <command>` (the n-th occurrence, from 0). */
export function captureSection(text: string, command: string, occurrence = 0): string {
  const lines = text.split('\n');
  let seen = -1;
  for (let index = 0; index < lines.length; index += 1) {
    if (lines[index] !== `# $ ${command}` && lines[index]!.trimEnd() !== `# $ ${command}`) continue;
    seen += 1;
    if (seen !== occurrence) continue;
    const start = index + 2; // skip the closing ##### line
    let end = start;
    while (end < lines.length && !lines[end]!.startsWith('################')) end += 1;
    return lines.slice(start, end).join('\n');
  }
  throw new Error(`no section for ${command} (#${occurrence})`);
}
