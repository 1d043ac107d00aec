/**
 * The centre's HTTP face: read-only JSON answers over the federated fleet (bound to 127.0.0.1 unless told otherwise).
 *
 *   GET /v1/fleet/sites     each site: live, partitioned since T (last heard at P), catching up or refused; its
 *                           replicated, verified and applied positions, witnessed checkpoints, refusals, site alarms
 *   GET /v1/fleet/vector    the read models' position per site
 *   GET /v1/fleet/liveness  liveness counts per site and for the fleet, each site labelled
 *   GET /v1/fleet/nodes     ?state=dark&site=ams1&limit=N: nodes with their site's label ("as of T")
 *   GET /v1/fleet/alarms    site alarms, then each site's node alarms, labelled
 *   GET /v1/fleet/rebuild-check   rebuilds every site's read models from its replicated log into a scratch schema and
 *                           compares them with the live ones (holding each site's still meanwhile): the proof that
 *                           the answers are what the logs say
 *   GET /healthz
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Centre } from './centre.js';
import { fleetAlarms, fleetLiveness, fleetNodes, fleetSites, fleetVector } from './fleet-answers.js';

export async function serveCentreApi(centre: Centre, options: { port: number; host?: string }): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.get('/healthz', async () => ({ ok: true }));
  app.get('/v1/fleet/sites', async () => ({ sites: await fleetSites(centre.pool) }));
  app.get('/v1/fleet/vector', async () => ({ vector: await fleetVector(centre.pool) }));
  app.get('/v1/fleet/liveness', async () => fleetLiveness(centre.pool, centre.readModels.db));
  app.get<{ Querystring: { state?: string; site?: string; limit?: string } }>('/v1/fleet/nodes', async (request) => {
    const limit = request.query.limit === undefined ? 1000 : Math.max(1, Math.min(10_000, Number(request.query.limit) || 1000));
    return fleetNodes(centre.pool, centre.readModels.db, { ...(request.query.state ? { state: request.query.state } : {}), ...(request.query.site ? { site: request.query.site } : {}), limit });
  });
  app.get('/v1/fleet/rebuild-check', async () => {
    const sites = await centre.compareWithRebuild();
    return { matches: sites.every((site) => site.matches), sites };
  });
  app.get('/v1/fleet/alarms', async () => fleetAlarms(centre.pool, centre.readModels.db));
  await app.listen({ port: options.port, host: options.host ?? '127.0.0.1' });
  return app;
}
