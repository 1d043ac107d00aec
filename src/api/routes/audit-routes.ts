/**
 * The transparency log for auditors and witnesses. What a transparency log publishes anyway is public: the newest
 * signed checkpoint, the public key and consistency proofs (they carry hashes only). Inclusion proofs, the status and
 * exports (which carry the events) need the auditor role.
 */
import { Readable } from 'node:stream';
import { z } from 'zod';
import { AuditError, consistencyProof, exportLines, inclusionProof, inSnapshot, type AuditService } from '../../../replay/audit/index.js';
import { ApiError } from '../api-error.js';
import { auditRoles, type ApiContext, type ZodApp } from '../api-context.js';

const access = { access: { roles: auditRoles } };
const tags = ['audit'];
const hex = (buffer: Buffer): string => buffer.toString('hex');
const size = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

function auditOf(ctx: ApiContext): AuditService {
  if (!ctx.audit) throw new ApiError('API_NOT_FOUND', { resource: 'transparency log' }, 'this ledger runs without its transparency log (start it with the audit service)');
  return ctx.audit;
}

/** Proof errors are the caller's: a size beyond the tree, a position outside it. */
async function answer<T>(run: () => Promise<T>, field: string): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof AuditError && (error.code === 'AUDIT_BAD_RANGE' || error.code === 'AUDIT_BEYOND_TREE')) throw new ApiError('API_INVALID_REQUEST', { field, reason: error.message }, error.message);
    throw error;
  }
}

export function auditRoutes(app: ZodApp, ctx: ApiContext): void {
  app.get('/v1/audit/checkpoint', {
    schema: { tags, summary: 'the newest signed checkpoint (C2SP signed note, text/plain): origin, tree size, root, time' },
    handler: async (_request, reply) => {
      const audit = auditOf(ctx);
      const row = (await audit.pool.query<{ signed_note: string }>('SELECT signed_note FROM ledger_checkpoints ORDER BY size DESC LIMIT 1')).rows[0];
      if (!row) throw new ApiError('API_NOT_FOUND', { resource: 'checkpoint' }, 'no checkpoint has been signed yet');
      return reply.type('text/plain; charset=utf-8').send(row.signed_note);
    },
  });

  app.get('/v1/audit/checkpoints/:size', {
    schema: { tags, summary: 'the signed checkpoint of one tree size (text/plain), so proofs can be checked against a signed root', params: z.object({ size }) },
    handler: async (request, reply) => {
      const row = (await auditOf(ctx).pool.query<{ signed_note: string }>('SELECT signed_note FROM ledger_checkpoints WHERE size = $1', [request.params.size])).rows[0];
      if (!row) throw new ApiError('API_NOT_FOUND', { resource: 'checkpoint', id: String(request.params.size) }, `no checkpoint was signed at size ${request.params.size}`);
      return reply.type('text/plain; charset=utf-8').send(row.signed_note);
    },
  });

  app.get('/v1/audit/public-key', {
    schema: { tags, summary: "the checkpoints' verifier key (`<name>+<key id>+<key>`, text/plain)" },
    handler: async (_request, reply) => reply.type('text/plain; charset=utf-8').send(`${auditOf(ctx).signer.verifierKey}\n`),
  });

  app.get('/v1/audit/proofs/consistency', {
    schema: { tags, summary: 'RFC 9162 consistency proof: the tree of `from` leaves is a prefix of the tree of `to` leaves', querystring: z.object({ from: size, to: size }) },
    handler: async (request) => {
      const proof = await answer(() => consistencyProof(auditOf(ctx).pool, request.query.from, request.query.to), 'from');
      return { from: proof.from, to: proof.to, fromRoot: hex(proof.fromRoot), toRoot: hex(proof.toRoot), proof: proof.proof.map(hex) };
    },
  });

  app.get('/v1/audit/proofs/inclusion', {
    config: access,
    schema: { tags, summary: 'RFC 9162 inclusion proof of the event at `position` in the tree of `size` leaves (default: the newest checkpoint)', querystring: z.object({ position: size, size: size.optional() }) },
    handler: async (request) => {
      const audit = auditOf(ctx);
      // The newest checkpoint, the proof and the event's hash from one snapshot of the log.
      const { proof, event } = await inSnapshot(audit.pool, async (client) => {
        const treeSize = request.query.size ?? Number((await client.query<{ size: string }>('SELECT max(size) AS size FROM ledger_checkpoints')).rows[0]?.size ?? 0);
        const proof = await answer(() => inclusionProof(client, request.query.position, treeSize), 'position');
        const event = (await client.query<{ hash: Buffer; prev_hash: Buffer }>('SELECT hash, prev_hash FROM ledger_events WHERE position = $1', [request.query.position])).rows[0];
        return { proof, event };
      });
      return {
        position: request.query.position,
        leafIndex: proof.leafIndex,
        treeSize: proof.treeSize,
        eventHash: event ? hex(event.hash) : null,
        leafHash: hex(proof.leafHash),
        root: hex(proof.root),
        proof: proof.proof.map(hex),
      };
    },
  });

  app.get('/v1/audit/status', {
    config: access,
    schema: { tags, summary: "the Merkle follower's lag behind the head, the newest checkpoint, the publishing folder" },
    handler: async () => auditOf(ctx).status(),
  });

  app.get('/v1/audit/export', {
    config: access,
    schema: {
      tags,
      summary: 'an audit export of [from, to] (text; `to` rounds up to the next signed checkpoint): check it offline with `fleet-ledger audit verify`',
      querystring: z.object({ from: size.optional(), to: size.optional() }),
    },
    handler: async (request, reply) => {
      const audit = auditOf(ctx);
      const lines = exportLines(audit.pool, { ...(request.query.from ? { from: request.query.from } : {}), ...(request.query.to ? { to: request.query.to } : {}) });
      // The first line is produced before answering, so a bad range is a 400 and not a broken stream.
      const first = await answer(() => lines.next(), 'from');
      async function* all(): AsyncGenerator<string> {
        if (!first.done) yield first.value;
        yield* lines;
      }
      return reply.type('text/plain; charset=utf-8').send(Readable.from(all()));
    },
  });
}
