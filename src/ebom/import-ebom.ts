/**
 * An EBOM import: one decision. The file is parsed and every row validated first; if any row is bad, the
 * problems are returned and nothing is appended. A good file becomes one `EbomImported` (stream
 * `ebom-<importId>`) and one `NodeDeclared` per row (stream `node-<nodeId>`), all with the operator who asked.
 *
 * Event ids derive from the import id and the row, and the import id from the file's digest unless given, so
 * running the same import again after an interruption completes it and writes nothing twice.
 */
import { createHash } from 'node:crypto';
import type { EbomRow, ProposedEvent } from '../../events/index.js';
import { nameUuid, type EventStore } from '../ledger/index.js';
import { parseEbom, type EbomProblem } from './parse-ebom.js';

export interface EbomImportRequest {
  text: string;
  format: 'csv' | 'json';
  /** Where the file came from (a path or a URL), recorded on the import. */
  source: string;
  operatorId: string;
  importId?: string;
}

export type EbomImportResult =
  | { ok: true; importId: string; rows: number; sha256: string; positions: number[]; alreadyImported: boolean }
  | { ok: false; problems: EbomProblem[] };

export async function importEbom(store: EventStore, request: EbomImportRequest): Promise<EbomImportResult> {
  const parsed = parseEbom(request.text, request.format);
  if (!parsed.ok) return parsed;
  return appendEbom(store, { ...request, rows: parsed.rows, sha256: createHash('sha256').update(request.text).digest('hex') });
}

/** The rows of a file already parsed and validated (`parseEbom`, maybe on another thread), and the file's digest. */
export interface ParsedEbomImport extends Omit<EbomImportRequest, 'text' | 'format'> {
  rows: Array<{ line: number; row: EbomRow }>;
  sha256: string;
}

/** Records a validated EBOM: what `importEbom` does once the file is parsed, for a caller that parsed it elsewhere. */
export async function appendEbom(store: EventStore, request: ParsedEbomImport): Promise<EbomImportResult & { ok: true }> {
  const { rows, sha256 } = request;
  const importId = request.importId ?? `ebom-${sha256.slice(0, 16)}`;
  const actor = { kind: 'operator' as const, id: request.operatorId };
  const imported: ProposedEvent = {
    eventId: nameUuid(`${importId}/import`),
    type: 'EbomImported',
    data: { importId, source: request.source, rows: rows.length, sha256 },
    actor,
    correlationId: importId,
  };
  const header = await store.append(`ebom-${importId}`, [imported]);
  // Concurrent appends share group commits: the rows land in as few transactions as the batch limit allows.
  const results = await Promise.all(
    rows.map(({ row }) =>
      store.append(`node-${row.nodeId}`, [
        {
          eventId: nameUuid(`${importId}/${row.nodeId}`),
          type: 'NodeDeclared',
          data: { importId, declaration: row },
          actor,
          correlationId: importId,
          causationId: imported.eventId,
        },
      ]),
    ),
  );
  return {
    ok: true,
    importId,
    rows: rows.length,
    sha256,
    positions: [...header.positions, ...results.flatMap((r) => r.positions)],
    alreadyImported: header.idempotentReplay && results.every((r) => r.idempotentReplay),
  };
}
