/** The EBOM: reading a bill of materials and importing it into the ledger as one decision. */
export { parseCsv, CsvSyntaxError, type CsvRecord } from './csv.js';
export { parseEbom, parseEbomCsv, parseEbomJson, type EbomParse, type EbomProblem } from './parse-ebom.js';
export { appendEbom, importEbom, type EbomImportRequest, type EbomImportResult, type ParsedEbomImport } from './import-ebom.js';
