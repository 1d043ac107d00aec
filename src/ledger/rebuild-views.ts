import { sql, type Kysely } from 'kysely';
import type { DynamicDatabase } from './database.js';

/**
 * The views analysts built on a projection's tables, which a rebuild's swap drops with the old tables: found before
 * the swap and made again after it, on the rebuilt tables, with their owner and grants.
 */
export interface DependentView {
  name: string;
  kind: 'v' | 'm';
  definition: string;
  owner: string;
  grants: Array<{ grantee: string; privilege: string }>;
}
export type ViewsRestored = { restored: string[]; lost: Array<{ view: string; reason: string }> };

/** Every view and materialized view that depends on `tables` in public, directly or through other views, oldest first. */
export async function dependentViews(trx: Kysely<DynamicDatabase>, tables: readonly string[]): Promise<DependentView[]> {
  const { rows } = await sql<{ name: string; kind: 'v' | 'm'; definition: string; owner: string; grants: Array<{ grantee: string; privilege: string }> | null }>`
    WITH RECURSIVE deps(oid) AS (
      SELECT DISTINCT r.ev_class FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid
       WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
         AND d.refobjid IN (SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relname = ANY(${sql.val([...tables])}::text[]))
      UNION
      SELECT r.ev_class FROM deps JOIN pg_depend d ON d.refobjid = deps.oid AND d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
        JOIN pg_rewrite r ON r.oid = d.objid
    )
    SELECT format('%I.%I', n.nspname, c.relname) AS name, c.relkind AS kind, pg_get_viewdef(c.oid) AS definition,
           pg_get_userbyid(c.relowner) AS owner,
           (SELECT json_agg(json_build_object('grantee', CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END, 'privilege', a.privilege_type))
              FROM aclexplode(c.relacl) a WHERE a.grantee <> c.relowner) AS grants
      FROM deps JOIN pg_class c ON c.oid = deps.oid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('v', 'm') AND NOT (n.nspname = 'public' AND c.relname = ANY(${sql.val([...tables])}::text[]))
     ORDER BY c.oid`.execute(trx);
  return rows.map((row) => ({ ...row, grants: row.grants ?? [] }));
}

/** Makes each view again (each in a savepoint: one that no longer fits is reported, the swap goes on). */
export async function restoreViews(trx: Kysely<DynamicDatabase>, views: readonly DependentView[]): Promise<ViewsRestored> {
  const result: ViewsRestored = { restored: [], lost: [] };
  for (const [index, view] of views.entries()) {
    const savepoint = sql.raw(`restore_view_${index}`);
    await sql`SAVEPOINT ${savepoint}`.execute(trx);
    try {
      const body = sql.raw(view.definition.trim().replace(/;$/, ''));
      const name = sql.raw(view.name);
      if (view.kind === 'm') await sql`CREATE MATERIALIZED VIEW ${name} AS ${body}`.execute(trx);
      else await sql`CREATE VIEW ${name} AS ${body}`.execute(trx);
      await sql`ALTER ${sql.raw(view.kind === 'm' ? 'MATERIALIZED VIEW' : 'VIEW')} ${name} OWNER TO ${sql.raw(quoteIdent(view.owner))}`.execute(trx);
      for (const grant of view.grants) await sql`GRANT ${sql.raw(grant.privilege)} ON ${name} TO ${sql.raw(grant.grantee)}`.execute(trx);
      await sql`RELEASE SAVEPOINT ${savepoint}`.execute(trx);
      result.restored.push(view.name);
    } catch (error) {
      await sql`ROLLBACK TO SAVEPOINT ${savepoint}`.execute(trx);
      result.lost.push({ view: view.name, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  return result;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
