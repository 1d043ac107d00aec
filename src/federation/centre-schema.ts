/**
 * The centre's database: every site's log and checkpoints as PostgreSQL's logical replication delivers them, and the
 * centre's own bookkeeping of each site.
 *
 * Layout (docs/architecture.md, "Sites and the centre"): logical replication matches a published table to the
 * subscriber's table of the same qualified name, so every site's `public.ledger_events` arrives in the centre's
 * `public.ledger_events`. That table is partitioned by the `site` column each site stamps its rows with, and each
 * site's partition lives in the site's own schema (`site_<name>.ledger_events`), beside its checkpoints and the read
 * models the centre derives from its log. Positions, hash chains and Merkle trees are per site (the primary key is
 * `(site, position)`); nothing of one site's log can land in another's partition.
 *
 * The triggers on each partition run for replicated changes too (`ENABLE ALWAYS`): they are the centre's first line as
 * a witness. A row rewritten or deleted on the site, a second row at a position the centre holds with another hash
 * (a fork, a rolled-back site appending again), a row whose chain link disagrees with its neighbours, a checkpoint at
 * a size already witnessed with another root: each is refused (the centre keeps what it held) and recorded with its
 * evidence in `fleet_site_refusals`. Once a site was refused, any later change of it is an error (the apply worker
 * stops on it, the rest stays in the site's slot) and the centre disables the subscription (src/federation/centre.ts),
 * so the slot keeps the rest for the investigation. The same row again (a re-synchronised site's copy) is skipped.
 * (`disable_on_error` is not used: a subscription would be disabled by the first network error of a WAN cut.)
 */
import pg from 'pg';
import { siteName, siteSchema } from './site-names.js';

const ident = (name: string): string => pg.escapeIdentifier(name);

/** The tables and functions every centre has (idempotent). */
export async function ensureCentreSchema(client: pg.ClientBase): Promise<void> {
  await client.query(`
    CREATE TABLE IF NOT EXISTS ledger_events (
      position        bigint      NOT NULL,
      event_id        uuid        NOT NULL,
      stream          text        COLLATE "C" NOT NULL,
      stream_version  integer     NOT NULL,
      type            text        NOT NULL,
      schema_version  integer     NOT NULL,
      recorded_at     timestamptz NOT NULL,
      observed_at     timestamptz,
      actor           jsonb       NOT NULL,
      correlation_id  text,
      causation_id    text,
      data            jsonb       NOT NULL,
      prev_hash       bytea       NOT NULL,
      hash            bytea       NOT NULL,
      site            text        NOT NULL,
      PRIMARY KEY (site, position)
    ) PARTITION BY LIST (site);

    CREATE TABLE IF NOT EXISTS ledger_checkpoints (
      size          bigint      NOT NULL,
      root          bytea       NOT NULL,
      signed_note   text        NOT NULL,
      key_id        text        NOT NULL,
      published_at  timestamptz NOT NULL,
      site          text        NOT NULL,
      PRIMARY KEY (site, size)
    ) PARTITION BY LIST (site);

    -- This centre's identity: its slots on the sites are named after it.
    CREATE TABLE IF NOT EXISTS fleet_centre (
      singleton   boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
      centre_id   text        NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT now()
    );
    INSERT INTO fleet_centre (centre_id) VALUES (substr(md5(gen_random_uuid()::text), 1, 8)) ON CONFLICT DO NOTHING;

    -- The sites this centre federates: how their checkpoints are verified, and where they publish (password removed).
    CREATE TABLE IF NOT EXISTS fleet_sites (
      site          text        PRIMARY KEY,
      verifier_key  text        NOT NULL,
      publisher     text        NOT NULL,
      added_at      timestamptz NOT NULL DEFAULT now()
    );

    -- Written by the partition triggers, as heartbeats arrive: the newest heard, on the site's clock and on ours.
    CREATE TABLE IF NOT EXISTS fleet_site_heard (
      site         text        PRIMARY KEY,
      position     bigint      NOT NULL,
      recorded_at  timestamptz NOT NULL,
      arrived_at   timestamptz NOT NULL,
      interval_s   double precision NOT NULL,
      slots        jsonb       NOT NULL DEFAULT '[]'
    );

    -- What the centre refused of a site, with the evidence. A site with a row here is refused.
    CREATE TABLE IF NOT EXISTS fleet_site_refusals (
      id          bigserial   PRIMARY KEY,
      site        text        NOT NULL,
      kind        text        NOT NULL,
      position    bigint,
      detail      jsonb       NOT NULL,
      xid         xid8        NOT NULL DEFAULT pg_current_xact_id(),
      refused_at  timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX IF NOT EXISTS fleet_site_refusals_site ON fleet_site_refusals (site, id);

    -- The witness: how far each site's log is verified (chain and hashes), and its newest checkpoint proven.
    CREATE TABLE IF NOT EXISTS fleet_site_witness (
      site                   text        PRIMARY KEY,
      origin                 text,
      verified_position      bigint      NOT NULL DEFAULT 0,
      verified_hash          bytea,
      witnessed_size         bigint      NOT NULL DEFAULT 0,
      witnessed_root         bytea,
      witnessed_at           timestamptz,
      checkpoints_witnessed  bigint      NOT NULL DEFAULT 0
    );

    -- Each checkpoint the centre proved against the log it holds, co-signed with the centre's witness key.
    CREATE TABLE IF NOT EXISTS fleet_site_cosigned (
      site          text        NOT NULL,
      size          bigint      NOT NULL,
      root          bytea       NOT NULL,
      cosigned_note text        NOT NULL,
      witnessed_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (site, size)
    );

    -- How each site is shown: live, partitioned since T (last heard at P), catching up, or refused.
    CREATE TABLE IF NOT EXISTS fleet_site_state (
      site                text        PRIMARY KEY,
      state               text        NOT NULL,
      as_of               timestamptz,
      as_of_position      bigint,
      partitioned_since   timestamptz,
      partition_position  bigint,
      shown_at            timestamptz NOT NULL,
      detail              text
    );

    -- Site alarms (one per site and cause, not one per node).
    CREATE TABLE IF NOT EXISTS fleet_site_alarms (
      alarm_id    bigserial   PRIMARY KEY,
      site        text        NOT NULL,
      code        text        NOT NULL,
      summary     text        NOT NULL,
      detail      jsonb       NOT NULL DEFAULT '{}',
      raised_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
      cleared_at  timestamptz
    );
    CREATE UNIQUE INDEX IF NOT EXISTS fleet_site_alarms_open ON fleet_site_alarms (site, code) WHERE cleared_at IS NULL;

    -- The fleet's read models are applied per site up to a position: together, the fleet's position vector.
    CREATE TABLE IF NOT EXISTS fleet_read_model_positions (
      site      text    PRIMARY KEY,
      position  bigint  NOT NULL DEFAULT 0,
      version   text    NOT NULL
    );

    CREATE OR REPLACE FUNCTION fleet_refuse(p_site text, p_kind text, p_position bigint, p_detail jsonb) RETURNS void
    LANGUAGE sql AS $$
      INSERT INTO public.fleet_site_refusals (site, kind, position, detail) VALUES (p_site, p_kind, p_position, p_detail)
    $$;

    -- Refused in an earlier transaction: nothing more of the site is applied (the apply transaction that found the
    -- first refusal still records every refusal it meets).
    CREATE OR REPLACE FUNCTION fleet_site_refused_before(p_site text) RETURNS boolean
    LANGUAGE sql STABLE AS $$
      SELECT EXISTS (SELECT 1 FROM public.fleet_site_refusals WHERE site = p_site AND xid <> pg_current_xact_id())
    $$;

    CREATE OR REPLACE FUNCTION fleet_events_arrive() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      held bytea;
      before bytea;
      after bytea;
      genesis constant bytea := decode(repeat('00', 32), 'hex');
    BEGIN
      IF TG_OP = 'INSERT' THEN
        IF public.fleet_site_refused_before(NEW.site) THEN
          RAISE EXCEPTION 'site % was refused by the centre; nothing more of its log is applied', NEW.site USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        SELECT hash INTO held FROM public.ledger_events WHERE site = NEW.site AND position = NEW.position;
        IF FOUND THEN
          IF held = NEW.hash THEN
            RETURN NULL; -- the same row again: a re-synchronised copy
          END IF;
          PERFORM public.fleet_refuse(NEW.site, 'fork', NEW.position, jsonb_build_object(
            'held_hash', encode(held, 'hex'), 'offered_hash', encode(NEW.hash, 'hex'), 'offered_type', NEW.type,
            'offered_recorded_at', NEW.recorded_at, 'reason', 'a second row at a position the centre holds: the site''s log was rolled back or forked'));
          RETURN NULL;
        END IF;
        IF NEW.position = 1 THEN
          before := genesis;
        ELSE
          SELECT hash INTO before FROM public.ledger_events WHERE site = NEW.site AND position = NEW.position - 1;
        END IF;
        IF before IS NOT NULL AND before <> NEW.prev_hash THEN
          PERFORM public.fleet_refuse(NEW.site, 'fork', NEW.position, jsonb_build_object(
            'held_prev_hash', encode(before, 'hex'), 'offered_prev_hash', encode(NEW.prev_hash, 'hex'), 'offered_hash', encode(NEW.hash, 'hex'),
            'reason', 'the row does not chain to the row the centre holds before it'));
          RETURN NULL;
        END IF;
        SELECT prev_hash INTO after FROM public.ledger_events WHERE site = NEW.site AND position = NEW.position + 1;
        IF after IS NOT NULL AND after <> NEW.hash THEN
          PERFORM public.fleet_refuse(NEW.site, 'fork', NEW.position, jsonb_build_object(
            'held_next_prev_hash', encode(after, 'hex'), 'offered_hash', encode(NEW.hash, 'hex'),
            'reason', 'the row does not chain to the row the centre holds after it'));
          RETURN NULL;
        END IF;
        IF NEW.type = 'SiteHeartbeat' THEN
          INSERT INTO public.fleet_site_heard AS h (site, position, recorded_at, arrived_at, interval_s, slots)
          VALUES (NEW.site, NEW.position, NEW.recorded_at, clock_timestamp(), (NEW.data->>'intervalS')::double precision, coalesce(NEW.data->'slots', '[]'))
          ON CONFLICT (site) DO UPDATE SET position = EXCLUDED.position, recorded_at = EXCLUDED.recorded_at, arrived_at = EXCLUDED.arrived_at,
                 interval_s = EXCLUDED.interval_s, slots = EXCLUDED.slots
           WHERE h.position < EXCLUDED.position;
        END IF;
        RETURN NEW;
      END IF;
      IF public.fleet_site_refused_before(OLD.site) THEN
        RAISE EXCEPTION 'site % was refused by the centre; nothing more of its log is applied', OLD.site USING ERRCODE = 'integrity_constraint_violation';
      END IF;
      PERFORM public.fleet_refuse(OLD.site, CASE TG_OP WHEN 'UPDATE' THEN 'rewrite' ELSE 'delete' END, OLD.position, jsonb_build_object(
        'held_hash', encode(OLD.hash, 'hex'),
        'held', to_jsonb(OLD) - 'prev_hash' - 'hash',
        'offered', CASE WHEN TG_OP = 'UPDATE' THEN to_jsonb(NEW) - 'prev_hash' - 'hash' END,
        'offered_hash', CASE WHEN TG_OP = 'UPDATE' THEN encode(NEW.hash, 'hex') END,
        'reason', CASE TG_OP WHEN 'UPDATE' THEN 'the site rewrote a row of its log' ELSE 'the site deleted a row of its log' END));
      RETURN NULL;
    END $$;

    CREATE OR REPLACE FUNCTION fleet_checkpoints_arrive() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      held bytea;
    BEGIN
      IF TG_OP = 'INSERT' THEN
        IF public.fleet_site_refused_before(NEW.site) THEN
          RAISE EXCEPTION 'site % was refused by the centre; nothing more of its log is applied', NEW.site USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        SELECT root INTO held FROM public.ledger_checkpoints WHERE site = NEW.site AND size = NEW.size;
        IF FOUND THEN
          IF held = NEW.root THEN
            RETURN NULL;
          END IF;
          PERFORM public.fleet_refuse(NEW.site, 'checkpoint-fork', NEW.size, jsonb_build_object(
            'held_root', encode(held, 'hex'), 'offered_root', encode(NEW.root, 'hex'), 'offered_note', NEW.signed_note,
            'reason', 'a second checkpoint at a size the centre holds, with another root: the site''s log forked'));
          RETURN NULL;
        END IF;
        RETURN NEW;
      END IF;
      IF public.fleet_site_refused_before(OLD.site) THEN
        RAISE EXCEPTION 'site % was refused by the centre; nothing more of its log is applied', OLD.site USING ERRCODE = 'integrity_constraint_violation';
      END IF;
      PERFORM public.fleet_refuse(OLD.site, 'checkpoint-' || lower(TG_OP), OLD.size, jsonb_build_object(
        'held_root', encode(OLD.root, 'hex'), 'reason', 'the site changed a checkpoint it had signed'));
      RETURN NULL;
    END $$;

    CREATE OR REPLACE FUNCTION fleet_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'TRUNCATE of % refused: the centre keeps what it witnessed', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
    END $$;
  `);
  for (const table of ['ledger_events', 'ledger_checkpoints']) {
    const trigger = `${table}_no_truncate`;
    const exists = (await client.query('SELECT 1 FROM pg_trigger WHERE tgname = $1 AND tgrelid = $2::regclass', [trigger, `public.${table}`])).rowCount;
    if (!exists) await client.query(`CREATE TRIGGER ${trigger} BEFORE TRUNCATE ON public.${table} FOR EACH STATEMENT EXECUTE FUNCTION fleet_refuse_truncate()`);
  }
}

/**
 * The site's schema and partitions, with their triggers enabled for replicated changes too (idempotent). The read
 * models' tables are made in the same schema by the read models (src/federation/site-read-models.ts).
 */
export async function ensureSitePartitions(client: pg.ClientBase, site: string): Promise<void> {
  siteName(site);
  const schema = siteSchema(site);
  const literal = pg.escapeLiteral(site);
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
  const triggers: Array<{ table: string; fn: string }> = [
    { table: 'ledger_events', fn: 'fleet_events_arrive' },
    { table: 'ledger_checkpoints', fn: 'fleet_checkpoints_arrive' },
  ];
  for (const { table, fn } of triggers) {
    const partition = `${ident(schema)}.${ident(table)}`;
    const exists = (await client.query('SELECT to_regclass($1) AS t', [`${schema}.${table}`])).rows[0]?.t;
    if (!exists) await client.query(`CREATE TABLE ${partition} PARTITION OF public.${table} FOR VALUES IN (${literal})`);
    const trigger = `${table}_arrive`;
    const hasTrigger = (await client.query('SELECT 1 FROM pg_trigger WHERE tgname = $1 AND tgrelid = $2::regclass', [trigger, `${schema}.${table}`])).rowCount;
    if (!hasTrigger) {
      await client.query(`CREATE TRIGGER ${trigger} BEFORE INSERT OR UPDATE OR DELETE ON ${partition} FOR EACH ROW EXECUTE FUNCTION public.${fn}()`);
    }
    await client.query(`ALTER TABLE ${partition} ENABLE ALWAYS TRIGGER ${trigger}`);
  }
  await client.query('INSERT INTO fleet_site_witness (site) VALUES ($1) ON CONFLICT DO NOTHING', [site]);
}

/** Settings of the centre's embedded PostgreSQL: room for a subscription per site, and quick reconnection after a cut. */
export function centrePostgresSettings(sites = 8): Record<string, string> {
  const workers = Math.max(8, sites * 2 + 4);
  return {
    max_logical_replication_workers: String(workers),
    max_worker_processes: String(workers + 8),
    max_sync_workers_per_subscription: '2',
    // After a cut the apply worker is started again this soon (default 5 s).
    wal_retrieve_retry_interval: '1s',
    // A silent link (a WAN cut that drops packets) is given up within this, and the worker reconnects when it can.
    wal_receiver_timeout: '15s',
  };
}
