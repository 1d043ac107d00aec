/**
 * SQL literals for the first round trip of the append path (begin, lock, and the reads under the lock, several
 * statements in one simple-protocol message; the rows themselves travel as parameters). Safe because every append
 * transaction first sets `standard_conforming_strings = on` (backslashes are plain characters; only quotes need
 * doubling) and NUL characters are refused before any event reaches SQL.
 */
export function literal(value: string | number | Date | null): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
    return String(value);
  }
  const text = value instanceof Date ? value.toISOString() : value;
  if (text.includes('\u0000')) throw new Error('NUL character in a SQL literal');
  return `'${text.replaceAll("'", "''")}'`;
}

export function arrayLiteral(values: readonly (string | number | null)[], type: string): string {
  return `ARRAY[${values.map(literal).join(',')}]::${type}[]`;
}

/**
 * A parameter's text for a PostgreSQL array (`{"a","b",NULL}`), as pg writes a JavaScript array but without its
 * per-element escaping calls: every element quoted, a backslash or double quote inside it escaped with a backslash,
 * null as NULL. The append path sends its columns so (a thousand elements each for a batch of a thousand events).
 */
export function arrayParameter(values: readonly (string | number | null)[]): string {
  let text = '{';
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index];
    if (index > 0) text += ',';
    if (value === null || value === undefined) {
      text += 'NULL';
    } else if (typeof value === 'number') {
      text += String(value);
    } else if (value.includes('"') || value.includes('\\')) {
      text += `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
    } else {
      text += `"${value}"`;
    }
  }
  return `${text}}`;
}
