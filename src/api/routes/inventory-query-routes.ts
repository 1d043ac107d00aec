/**
 * Inventory, drift and compliance queries: counts by attribute, nodes as observed, heterogeneity, firmware versions,
 * fields that differ from the EBOM, firmware against baselines, BMC certificates expiring.
 */
import { z } from 'zod';
import { nodeIdSchema } from '../../../events/index.js';
import {
  certificateFindings,
  complianceByNode,
  complianceSummary,
  driftFindings,
  firmwareVersions,
  heterogeneityReport,
  inventoryBy,
  inventoryDimensions,
  inventoryNodeRows,
  type InventoryTextColumn,
} from '../../../projections/index.js';
import type { ApiContext, ZodApp } from '../api-context.js';
import { keyAfter, keysetPage, pageOf, pageQuery } from '../paging.js';
import { access, inventoryRow, queryAnswerer, readParameters, reads } from './query-support.js';

export function inventoryQueryRoutes(app: ZodApp, ctx: ApiContext): void {
  const tags = ['queries'];
  const answer = queryAnswerer(ctx);

  app.get('/v1/inventory', {
    config: access,
    schema: { tags, summary: 'node counts by one attribute (vendor, model, firmware, ...)', querystring: z.object({ ...pageQuery, by: z.enum(inventoryDimensions).default('manufacturer'), ...readParameters }) },
    handler: async (request, reply) =>
      answer(request, reply, reads.inventory, async (db) => ({ by: request.query.by, ...pageOf(await inventoryBy(db, request.query.by), request.query.cursor, request.query.limit) })),
  });

  app.get('/v1/inventory/nodes', {
    config: access,
    schema: {
      tags,
      summary: 'observed inventory per node, filtered',
      querystring: z.object({
        ...pageQuery,
        site: z.string().max(64).optional(),
        rack: z.string().max(64).optional(),
        manufacturer: z.string().max(200).optional(),
        model: z.string().max(200).optional(),
        gpuModel: z.string().max(200).optional(),
        bmcFirmware: z.string().max(200).optional(),
        biosVersion: z.string().max(200).optional(),
        ...readParameters,
      }),
    },
    handler: async (request, reply) =>
      answer(request, reply, reads.inventory, async (db) => {
        const q = request.query;
        const after = keyAfter(q.cursor);
        const filters: Array<[InventoryTextColumn, string | undefined]> = [
          ['site', q.site],
          ['rack', q.rack],
          ['manufacturer', q.manufacturer],
          ['model', q.model],
          ['gpu_model', q.gpuModel],
          ['bmc_firmware', q.bmcFirmware],
          ['bios_version', q.biosVersion],
        ];
        const rows = await inventoryNodeRows(db, { after, equal: filters, limit: q.limit + 1 });
        return keysetPage(rows.map(inventoryRow), q.limit, (row) => row.nodeId);
      }),
  });

  app.get('/v1/inventory/heterogeneity', {
    config: access,
    schema: { tags, summary: 'every (vendor, model, firmware component, version) with its node count, oldest first', querystring: z.object({ ...pageQuery, ...readParameters }) },
    handler: async (request, reply) => answer(request, reply, reads.inventory, async (db) => pageOf(await heterogeneityReport(db), request.query.cursor, request.query.limit)),
  });

  app.get('/v1/inventory/firmware/:component', {
    config: access,
    schema: {
      tags,
      summary: 'node counts per running version of one firmware component',
      params: z.object({ component: z.string().min(1).max(200) }),
      querystring: z.object({ ...pageQuery, ...readParameters }),
    },
    handler: async (request, reply) => answer(request, reply, reads.inventory, async (db) => pageOf(await firmwareVersions(db, request.params.component), request.query.cursor, request.query.limit)),
  });

  app.get('/v1/drift', {
    config: access,
    schema: {
      tags,
      summary: 'fields that differ from the EBOM declaration, oldest first',
      querystring: z.object({ ...pageQuery, nodeId: nodeIdSchema.optional(), kind: z.enum(['missing', 'unexpected', 'mismatch']).optional(), ...readParameters }),
    },
    handler: async (request, reply) =>
      answer(request, reply, reads.drift, async (db) => {
        const { nodeId, kind, cursor, limit } = request.query;
        return pageOf(await driftFindings(db, { ...(nodeId ? { nodeId } : {}), ...(kind ? { kind } : {}) }), cursor, limit);
      }),
  });

  app.get('/v1/compliance', {
    config: access,
    schema: { tags, summary: 'firmware compliance per component: at baseline, above, below, unknown', querystring: z.object({ ...pageQuery, ...readParameters }) },
    handler: async (request, reply) => answer(request, reply, reads.compliance, async (db) => pageOf(await complianceSummary(db), request.query.cursor, request.query.limit)),
  });

  app.get('/v1/compliance/certificates', {
    config: access,
    schema: {
      tags,
      summary: 'BMC certificates that have expired or expire within `withinDays` (default 30), soonest first',
      querystring: z.object({ ...pageQuery, withinDays: z.coerce.number().int().min(0).max(36_500).default(30), ...readParameters }),
    },
    handler: async (request, reply) =>
      answer(request, reply, reads.inventory, async (db) => pageOf(await certificateFindings(db, new Date(), request.query.withinDays), request.query.cursor, request.query.limit)),
  });

  app.get('/v1/compliance/nodes', {
    config: access,
    schema: {
      tags,
      summary: "each node's firmware against its own declared baseline",
      querystring: z.object({ ...pageQuery, component: z.string().min(1).max(200).optional(), status: z.enum(['at-baseline', 'above', 'below', 'unknown']).optional(), ...readParameters }),
    },
    handler: async (request, reply) =>
      answer(request, reply, reads.compliance, async (db) => {
        const { component, status, cursor, limit } = request.query;
        const nodes = (await complianceByNode(db, component)).filter((node) => !status || node.status === status);
        return pageOf(nodes, cursor, limit);
      }),
  });
}
