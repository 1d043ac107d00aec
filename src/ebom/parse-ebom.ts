/**
 * Reads an EBOM file (CSV with a header row, or JSON: an array of rows) into validated rows. Every row is checked
 * with `ebomRowSchema`; the result is either every row, or every problem with its line and reason: one import is
 * one decision, so a file with one bad row is refused as a whole.
 *
 * CSV columns are the row's fields (`nodeId,site,rack,position,manufacturer,model,serial,gpuCount,gpuModel,
 * memoryGiB,powerFeed,networkPort`) plus one `firmware.<Component>` column per baseline component. An empty
 * cell is an absent value.
 */
import { ebomRowSchema, type EbomRow } from '../../events/index.js';
import { CsvSyntaxError, parseCsv } from './csv.js';

export interface EbomProblem {
  /** 1-based line of the file where the bad row starts. */
  line: number;
  /** The field at fault, when one is. */
  field: string | null;
  reason: string;
}

export type EbomParse = { ok: true; rows: Array<{ line: number; row: EbomRow }> } | { ok: false; problems: EbomProblem[] };

const scalarColumns = new Set(['nodeId', 'site', 'rack', 'position', 'manufacturer', 'model', 'serial', 'gpuCount', 'gpuModel', 'memoryGiB', 'powerFeed', 'networkPort']);
const numericColumns = new Set(['gpuCount', 'memoryGiB']);
const firmwarePrefix = 'firmware.';

function validate(candidates: Array<{ line: number; value: unknown }>, problems: EbomProblem[]): EbomParse {
  const rows: Array<{ line: number; row: EbomRow }> = [];
  const seen = new Map<string, number>();
  for (const { line, value } of candidates) {
    const parsed = ebomRowSchema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) problems.push({ line, field: issue.path.map(String).join('.') || null, reason: issue.message });
      continue;
    }
    const first = seen.get(parsed.data.nodeId);
    if (first !== undefined) {
      problems.push({ line, field: 'nodeId', reason: `node ${parsed.data.nodeId} is already declared on line ${first}` });
      continue;
    }
    seen.set(parsed.data.nodeId, line);
    rows.push({ line, row: parsed.data });
  }
  if (problems.length > 0) return { ok: false, problems };
  if (rows.length === 0) return { ok: false, problems: [{ line: 1, field: null, reason: 'the file declares no node' }] };
  return { ok: true, rows };
}

export function parseEbomCsv(text: string): EbomParse {
  let records;
  try {
    records = parseCsv(text);
  } catch (error) {
    if (error instanceof CsvSyntaxError) return { ok: false, problems: [{ line: error.line, field: null, reason: error.message.replace(/^line \d+: /, '') }] };
    throw error;
  }
  const [header, ...body] = records;
  if (!header) return { ok: false, problems: [{ line: 1, field: null, reason: 'the file is empty' }] };
  const columns = header.fields.map((name) => name.trim());
  const problems: EbomProblem[] = [];
  columns.forEach((column) => {
    if (!scalarColumns.has(column) && !(column.startsWith(firmwarePrefix) && column.length > firmwarePrefix.length)) {
      problems.push({ line: header.line, field: column, reason: `unknown column '${column}' (firmware baselines are 'firmware.<Component>')` });
    }
  });
  if (problems.length > 0) return { ok: false, problems };
  const candidates = body.map((record) => {
    if (record.fields.length !== columns.length) {
      problems.push({ line: record.line, field: null, reason: `has ${record.fields.length} fields, the header has ${columns.length}` });
      return null;
    }
    const value: Record<string, unknown> = {};
    const firmwareBaseline: Record<string, string> = {};
    columns.forEach((column, index) => {
      const cell = record.fields[index]!.trim();
      if (cell === '') return;
      if (column.startsWith(firmwarePrefix)) firmwareBaseline[column.slice(firmwarePrefix.length)] = cell;
      else value[column] = numericColumns.has(column) && /^-?\d+(\.\d+)?$/.test(cell) ? Number(cell) : cell;
    });
    value.firmwareBaseline = firmwareBaseline;
    return { line: record.line, value };
  });
  return validate(
    candidates.filter((c) => c !== null),
    problems,
  );
}

/** The line each element of a top-level JSON array starts on. */
function elementLines(text: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let expectingElement = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (c === '\n') line += 1;
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
      continue;
    }
    if (/\s/.test(c)) continue;
    if (depth === 1 && expectingElement && c !== ']') {
      lines.push(line);
      expectingElement = false;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth += 1;
      if (depth === 1 && c === '[') expectingElement = true;
    } else if (c === ']' || c === '}') depth -= 1;
    else if (c === ',' && depth === 1) expectingElement = true;
  }
  return lines;
}

export function parseEbomJson(text: string): EbomParse {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [{ line: 1, field: null, reason: `not JSON: ${(error as Error).message}` }] };
  }
  if (!Array.isArray(value)) return { ok: false, problems: [{ line: 1, field: null, reason: 'expected a JSON array of EBOM rows' }] };
  const lines = elementLines(text);
  return validate(
    value.map((row, index) => ({ line: lines[index] ?? 1, value: row })),
    [],
  );
}

export function parseEbom(text: string, format: 'csv' | 'json'): EbomParse {
  return format === 'json' ? parseEbomJson(text) : parseEbomCsv(text);
}
