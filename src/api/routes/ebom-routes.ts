/**
 * The EBOM import: the declared bill of materials, as the file itself (CSV or JSON), read and validated on the body
 * thread and recorded as one decision (every row valid, or nothing imported), decided by its import id (the same file
 * again is `200`, `idempotentReplay`).
 */
import { z } from 'zod';
import { appendEbom } from '../../ebom/index.js';
import { ApiError } from '../api-error.js';
import { bodyCaps } from '../body-caps.js';
import type { ApiContext, ZodApp } from '../api-context.js';
import { intentAccess as access } from './intent-routes.js';

export function ebomRoutes(app: ZodApp, ctx: ApiContext): void {
  const tags = ['intents'];
  // The EBOM arrives as the file itself (CSV or JSON), read as text so its digest is the file's own; it is read and
  // validated on the body thread (seconds for tens of megabytes), never on the request thread.
  app.register(async (ebom: ZodApp) => {
    ebom.removeAllContentTypeParsers();
    ebom.addContentTypeParser(['text/csv', 'text/plain', 'application/json'], { parseAs: 'string' }, (_request, body, done) => done(null, body));
    ebom.post('/v1/ebom', {
      config: access,
      bodyLimit: bodyCaps.ebomBodyBytes,
      schema: {
        tags,
        summary: 'import an EBOM (CSV with a header row, or a JSON array of rows): one decision, all rows or none',
        querystring: z.object({ source: z.string().max(500).optional(), importId: z.string().min(1).max(200).regex(/^[A-Za-z0-9._:-]+$/).optional() }),
        body: z.string().min(1),
      },
      handler: async (request, reply) => {
        const contentType = String(request.headers['content-type'] ?? '');
        const format = contentType.includes('json') ? 'json' : 'csv';
        const { parse, sha256 } = await ctx.bodies.parseEbom(request.body, format);
        const result = !parse.ok
          ? parse
          : await ctx.timeAppend(() =>
              appendEbom(ctx.store, {
                rows: parse.rows,
                sha256,
                source: request.query.source ?? `api:${request.principal!.id}`,
                operatorId: request.principal!.id,
                ...(request.query.importId ? { importId: request.query.importId } : {}),
              }),
            );
        if (!result.ok) {
          const first = result.problems[0]!;
          throw new ApiError(
            'API_INVALID_REQUEST',
            { field: `body[line ${first.line}]${first.field ? `.${first.field}` : ''}`, reason: first.reason, problems: result.problems },
            `EBOM refused, nothing imported: line ${first.line}${first.field ? ` ${first.field}` : ''}: ${first.reason}${result.problems.length > 1 ? ` (and ${result.problems.length - 1} more problems)` : ''}`,
          );
        }
        reply.code(result.alreadyImported ? 200 : 201);
        const stream = `ebom-${result.importId}`;
        return {
          position: result.positions[result.positions.length - 1]!,
          stream,
          streamVersion: 1,
          idempotentReplay: result.alreadyImported,
          importId: result.importId,
          rows: result.rows,
          sha256: result.sha256,
        };
      },
    });
  });
}
