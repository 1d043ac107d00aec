/**
 * The centre's error codes are documented where operators read how to use the centre (docs/architecture.md, "Intents
 * through the centre"): every code of the catalogue with its status and whether a retry can succeed, and nothing else.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { centreErrorCatalogue } from '../../src/federation/index.js';

describe('the centre error catalogue', () => {
  it('is the table docs/architecture.md gives, code for code, with each status and retryability', () => {
    const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    const documented = [...doc.matchAll(/^\| `(CENTRE_[A-Z_]+)` \| (\d{3}) \| (yes|no) \|/gm)].map((m) => [m[1], Number(m[2]), m[3] === 'yes']);
    const catalogued = Object.entries(centreErrorCatalogue).map(([code, entry]) => [code, entry.status, entry.retryable]);
    expect(documented).toEqual(catalogued);
  });
});
