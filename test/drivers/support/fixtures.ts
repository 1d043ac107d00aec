/**
 * The team's real hardware captures, reached only through FLEET_LEDGER_FIXTURES (third-party data, never in the
 * repository). Without the variable the tests that read them are skipped off CI and fail on CI; see
 * `test/support/fixtures-requirement.ts`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesRequirement } from '../../support/fixtures-requirement.js';

export const fixtures = fixturesRequirement();

/** A path under the captures; throws with the reason when FLEET_LEDGER_FIXTURES is absent. */
export function fixturePath(...parts: string[]): string {
  return join(fixtures.require(), ...parts);
}

export function readFixture(...parts: string[]): string {
  return readFileSync(fixturePath(...parts), 'utf8');
}
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
