import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DriftProjection, driftFindings } from '../../projections/index.js';
import { importEbom, parseCsv, parseEbomCsv, parseEbomJson } from '../../src/ebom/index.js';
import { backends } from '../support/backends.js';
import { openHarness, project, type Harness } from './support/projection-harness.js';

const header = 'nodeId,site,rack,manufacturer,model,serial,gpuCount,firmware.BMC';

describe('EBOM reading', () => {
  it('a CSV field may hold quotes, commas and line breaks, and records end with CRLF or LF', () => {
    const records = parseCsv('a,"b, with comma","say ""hi""\r\nthere"\r\nx,,z\n\n"last",1,2');
    expect(records).toEqual([
      { line: 1, fields: ['a', 'b, with comma', 'say "hi"\r\nthere'] },
      { line: 3, fields: ['x', '', 'z'] },
      { line: 5, fields: ['last', '1', '2'] },
    ]);
  });

  it('a bad EBOM row is reported with its line and reason, and the file yields no rows', () => {
    const text = [header, 'n1,dc1,r1,HPE,DL380,S1,,2.72', 'n 2,dc1,r1,HPE,DL380,S2,,', 'n3,dc1,r1,HPE,DL380,S3,eight,', 'n1,dc1,r1,HPE,DL380,S4,,'].join('\r\n');
    const parsed = parseEbomCsv(text);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems).toEqual([
      { line: 3, field: 'nodeId', reason: 'node ids use letters, digits and . _ : - only' },
      { line: 4, field: 'gpuCount', reason: expect.stringMatching(/number/) },
      { line: 5, field: 'nodeId', reason: 'node n1 is already declared on line 2' },
    ]);
  });

  it('an unknown column is refused before any row is read', () => {
    const parsed = parseEbomCsv('nodeId,site,rack,colour\nn1,dc1,r1,red');
    expect(parsed).toEqual({ ok: false, problems: [{ line: 1, field: 'colour', reason: expect.stringContaining("unknown column 'colour'") }] });
  });

  it('a JSON EBOM reports a bad row with the line its object starts on', () => {
    const text = '[\n  {"nodeId": "n1", "site": "dc1", "rack": "r1", "manufacturer": "HPE", "model": "DL380", "serial": "S1"},\n  {"nodeId": "n2", "site": "dc1",\n   "rack": "r1", "manufacturer": "HPE", "model": "DL380"}\n]';
    expect(parseEbomJson(text)).toEqual({ ok: false, problems: [{ line: 3, field: 'serial', reason: expect.any(String) }] });
  });

  it('the example EBOM is valid', async () => {
    const parsed = parseEbomCsv(await readFile(new URL('../../examples/ebom.csv', import.meta.url), 'utf8'));
    expect(parsed.ok && parsed.rows.map((r) => r.row.nodeId)).toEqual(['dc1-r01-n01', 'dc1-r01-n02', 'dc1-r02-n01', 'dc1-r02-n02']);
  });
});

for (const backend of backends()) {
  describe.skipIf(!backend.adminUrl)(`EBOM import on ${backend.name} PostgreSQL`, () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await openHarness(backend.adminUrl!);
    });
    afterAll(async () => harness?.close());

    it('a bad EBOM row is reported with its line and nothing of the file is applied', async () => {
      const before = (await harness.store.head()).position;
      const result = await importEbom(harness.store, {
        text: [header, 'ok1,dc1,r1,HPE,DL380,S1,,', 'ok2,dc1,r1,HPE,DL380,,,'].join('\n'),
        format: 'csv',
        source: 'bad.csv',
        operatorId: 'alice',
      });
      expect(result).toEqual({ ok: false, problems: [{ line: 3, field: 'serial', reason: expect.any(String) }] });
      expect((await harness.store.head()).position).toBe(before);
    });

    it('a good EBOM becomes one EbomImported and one NodeDeclared per row, by the operator who asked, once', async () => {
      const text = await readFile(new URL('../../examples/ebom.csv', import.meta.url), 'utf8');
      const result = await importEbom(harness.store, { text, format: 'csv', source: 'examples/ebom.csv', operatorId: 'alice@example.org' });
      expect(result).toMatchObject({ ok: true, rows: 4, alreadyImported: false });
      if (!result.ok) return;
      const events = await harness.store.readAll({ fromPosition: result.positions[0] });
      expect(events.map((e) => [e.type, e.stream])).toEqual([
        ['EbomImported', `ebom-${result.importId}`],
        ['NodeDeclared', 'node-dc1-r01-n01'],
        ['NodeDeclared', 'node-dc1-r01-n02'],
        ['NodeDeclared', 'node-dc1-r02-n01'],
        ['NodeDeclared', 'node-dc1-r02-n02'],
      ]);
      for (const event of events) expect(event.actor).toEqual({ kind: 'operator', id: 'alice@example.org' });
      expect(events[0]!.data).toMatchObject({ importId: result.importId, rows: 4, source: 'examples/ebom.csv', sha256: result.sha256 });
      expect(events[3]!.data).toMatchObject({ declaration: { nodeId: 'dc1-r02-n01', gpuCount: 8, memoryGiB: 2048, firmwareBaseline: { BMC: '01.03.09', BIOS: '1.4' } } });

      // Running the same import again (after an interruption, say) writes nothing twice.
      const again = await importEbom(harness.store, { text, format: 'csv', source: 'examples/ebom.csv', operatorId: 'alice@example.org' });
      expect(again).toMatchObject({ ok: true, alreadyImported: true });
      expect((await harness.store.head()).position).toBe(events.at(-1)!.position);

      await project(harness.store, [new DriftProjection()]);
      expect((await driftFindings(harness.db, { kind: 'missing' })).map((f) => f.nodeId)).toEqual(['dc1-r01-n01', 'dc1-r01-n02', 'dc1-r02-n01', 'dc1-r02-n02']);
    });
  });
}
