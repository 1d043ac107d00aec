import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { documentedErrorCodes } from '../../src/api/index.js';
import { ledgerErrorCatalogue } from '../../src/ledger/index.js';

const readme = () => readFile(new URL('../../src/api/README.md', import.meta.url), 'utf8');

/** The rows of the README's error table: code -> status. */
function tableRows(text: string): Map<string, { status: number; retryable: string }> {
  const rows = new Map<string, { status: number; retryable: string }>();
  for (const match of text.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \| ([a-z]+) \|/gm)) rows.set(match[1]!, { status: Number(match[2]), retryable: match[3]! });
  return rows;
}

describe('the API error catalogue and its documentation', () => {
  it('every code an answer can carry has a row in src/api/README.md with its status, and no row is stale', async () => {
    const rows = tableRows(await readme());
    const codes = documentedErrorCodes();
    for (const { code, status } of codes) {
      expect(rows.get(code), `${code} has no row in src/api/README.md`).toBeDefined();
      expect(rows.get(code)!.status, `${code} status`).toBe(status);
    }
    expect([...rows.keys()].sort()).toEqual(codes.map((c) => c.code).sort());
  });

  it('every ledger code is mapped, and its documented retryability matches the ledger catalogue', async () => {
    const rows = tableRows(await readme());
    for (const [code, entry] of Object.entries(ledgerErrorCatalogue)) {
      expect(rows.get(code)?.retryable, code).toBe(entry.retryable ? 'yes' : 'no');
    }
  });
});
