/**
 * A small RFC 4180 CSV reader: fields separated by commas, records by CRLF or LF, fields optionally quoted with
 * `"` (a quoted field may hold commas, line breaks and `""` for a quote). Each record carries the line it
 * starts on, so an error can point at it. Pure.
 */

export interface CsvRecord {
  /** 1-based line of the file where the record starts. */
  line: number;
  fields: string[];
}

export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    reason: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  const input = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let line = 1;
  let fields: string[] = [];
  let field = '';
  let recordLine = 1;
  let quoted = false;
  let fieldStarted = false;
  let i = 0;
  const endField = (): void => {
    fields.push(field);
    field = '';
    fieldStarted = false;
  };
  const endRecord = (): void => {
    endField();
    // A blank line is no record (a trailing newline, or spacing between records).
    if (!(fields.length === 1 && fields[0] === '')) records.push({ line: recordLine, fields });
    fields = [];
  };
  while (i < input.length) {
    const c = input[i]!;
    if (quoted) {
      if (c === '"') {
        if (input[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i += 1;
        const next = input[i];
        if (next !== undefined && next !== ',' && next !== '\r' && next !== '\n') throw new CsvSyntaxError(line, `unexpected '${next}' after a closing quote`);
        continue;
      }
      if (c === '\n') line += 1;
      field += c;
      i += 1;
      continue;
    }
    if (c === '"') {
      if (fieldStarted || field.length > 0) throw new CsvSyntaxError(line, 'a quote inside an unquoted field');
      quoted = true;
      fieldStarted = true;
      i += 1;
    } else if (c === ',') {
      endField();
      i += 1;
    } else if (c === '\r' || c === '\n') {
      endRecord();
      i += c === '\r' && input[i + 1] === '\n' ? 2 : 1;
      line += 1;
      recordLine = line;
    } else {
      field += c;
      fieldStarted = true;
      i += 1;
    }
  }
  if (quoted) throw new CsvSyntaxError(recordLine, 'a quoted field is not closed');
  if (field.length > 0 || fields.length > 0 || fieldStarted) endRecord();
  return records;
}
