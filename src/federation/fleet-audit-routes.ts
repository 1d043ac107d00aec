/**
 * Audit across sites at the centre: each site's log as the centre witnessed it, exported in the format of a site's
 * own export (one site per request: `fleet-ledger audit fleet-export` fetches several into a folder), and the verifier
 * keys the centre pinned, for reference (an auditor checks each site against the key it holds from the site itself).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Centre } from './centre.js';
import { CentreError } from './centre-errors.js';
import { siteExportLines } from './site-audit-export.js';

export function fleetAuditRoutes(app: FastifyInstance, centre: Centre): void {
  app.get('/v1/fleet/audit/keys', async () => ({ keys: Object.fromEntries((await centre.pool.query<{ site: string; verifier_key: string }>('SELECT site, verifier_key FROM fleet_sites ORDER BY site')).rows.map((row) => [row.site, row.verifier_key])) }));
  app.get<{ Querystring: { site?: string; to?: string } }>('/v1/fleet/audit/export', async (request, reply) => {
    const site = request.query.site;
    if (!site || !centre.sites.includes(site)) throw new CentreError('CENTRE_INVALID_REQUEST', { field: 'site', reason: `one of ${centre.sites.join(', ')}` }, `site must be one of ${centre.sites.join(', ')}`);
    const to = request.query.to === undefined ? undefined : Number(request.query.to);
    if (to !== undefined && !Number.isSafeInteger(to)) throw new CentreError('CENTRE_INVALID_REQUEST', { field: 'to', reason: 'a position' }, 'to must be a position');
    const lines = siteExportLines(centre.pool, site, to === undefined ? {} : { to });
    // The first line is produced before answering, so a refusal is an answer and not a broken stream.
    const first = await lines.next();
    async function* all(): AsyncGenerator<string> {
      if (!first.done) yield first.value;
      yield* lines;
    }
    return reply.type('text/plain; charset=utf-8').send(Readable.from(all()));
  });
}
