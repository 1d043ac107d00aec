import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SIM_ERROR_CODES, controlStatus } from '../../src/sim/index.ts';

describe('error catalogue', { timeout: 30_000 }, () => {
  it('every simulator error code is documented with its status, and the README lists no other', () => {
    const readme = readFileSync(new URL('../../src/sim/README.md', import.meta.url), 'utf8');
    const documented = new Map([...readme.matchAll(/^\| `(SIM_[A-Z_]+)` \| (\d{3}) \|/gm)].map((match) => [match[1], Number(match[2])]));
    expect([...documented.keys()].sort()).toEqual([...SIM_ERROR_CODES].sort());
    for (const code of SIM_ERROR_CODES) expect(documented.get(code), code).toBe(controlStatus(code));
  });
});
