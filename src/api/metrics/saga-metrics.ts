import { sql } from 'kysely';
import { Gauge } from 'prom-client';
import type { MetricsContext, Registers } from './metrics-context.js';

/** Sagas, read from the log at scrape time (any instance can export them, whichever runs the engine). */
export function registerSagaMetrics(ctx: MetricsContext, registers: Registers): void {
  new Gauge({
    name: 'fleet_ledger_saga_slots_in_use',
    help: 'Disruption slots held now per site (capacity streams: acquired minus released)',
    labelNames: ['site'] as const,
    registers,
    async collect() {
      this.reset();
      const rows = await sql<{ stream: string; held: string }>`
        SELECT stream, sum(CASE WHEN type = 'SlotAcquired' THEN 1 WHEN type = 'SlotReleased' THEN -1 ELSE 0 END) AS held
          FROM ledger_events WHERE stream LIKE 'capacity-%' GROUP BY stream`.execute(ctx.db).catch(() => ({ rows: [] as Array<{ stream: string; held: string }> }));
      for (const row of rows.rows) this.set({ site: row.stream.slice('capacity-'.length) }, Number(row.held));
    },
  });
  new Gauge({
    name: 'fleet_ledger_rollout_nodes',
    help: 'Rollout nodes by state: outcomes recorded (updated, already-at-target, failed, quarantined, skipped), dispatched and in flight, and pending',
    labelNames: ['rollout', 'state'] as const,
    registers,
    async collect() {
      this.reset();
      const rows = await sql<{ rollout: string; state: string; n: string }>`
        SELECT stream AS rollout, coalesce(data->>'outcome', 'dispatched') AS state, count(*) AS n FROM ledger_events
         WHERE stream LIKE 'rollout-%' AND type IN ('NodeOutcomeRecorded', 'NodeDispatched') GROUP BY 1, 2`.execute(ctx.db).catch(() => ({ rows: [] as Array<{ rollout: string; state: string; n: string }> }));
      const dispatched = new Map<string, number>();
      for (const row of rows.rows) {
        const rollout = row.rollout.slice('rollout-'.length);
        if (row.state === 'dispatched') dispatched.set(rollout, (dispatched.get(rollout) ?? 0) + Number(row.n));
        else {
          this.set({ rollout, state: row.state }, Number(row.n));
          dispatched.set(rollout, (dispatched.get(rollout) ?? 0) - Number(row.n));
        }
      }
      for (const [rollout, n] of dispatched) this.set({ rollout, state: 'in-flight' }, Math.max(0, n));
    },
  });
  new Gauge({
    name: 'fleet_ledger_saga_holds',
    help: 'Node steps in a named hold now (deadline-exceeded: a state past its deadline; reconcile-required: outcome unknown)',
    labelNames: ['hold'] as const,
    registers,
    async collect() {
      this.reset();
      this.set({ hold: 'deadline-exceeded' }, 0);
      this.set({ hold: 'reconcile-required' }, 0);
      const rows = await sql<{ hold: string; n: string }>`
        SELECT e.data->>'hold' AS hold, count(*) AS n FROM ledger_streams s
          JOIN ledger_events e ON e.stream = s.stream AND e.stream_version = s.version
         WHERE s.stream LIKE 'fwstep-%' AND e.type = 'StepHeld' GROUP BY 1`.execute(ctx.db).catch(() => ({ rows: [] as Array<{ hold: string; n: string }> }));
      for (const row of rows.rows) this.set({ hold: row.hold }, Number(row.n));
    },
  });
  new Gauge({
    name: 'fleet_ledger_rotation_nodes',
    help: 'Credential rotation BMCs by state: settled (rotated, kept, held, skipped), and dispatched and in flight (fenced)',
    labelNames: ['rotation', 'state'] as const,
    registers,
    async collect() {
      this.reset();
      const rows = await sql<{ rotation: string; state: string; n: string }>`
        SELECT stream AS rotation, coalesce(data->>'outcome', 'dispatched') AS state, count(*) AS n FROM ledger_events
         WHERE stream LIKE 'rotation-%' AND type IN ('CredentialRotationNodeSettled', 'CredentialRotationNodeDispatched') GROUP BY 1, 2`.execute(ctx.db).catch(() => ({ rows: [] as Array<{ rotation: string; state: string; n: string }> }));
      const inFlight = new Map<string, number>();
      for (const row of rows.rows) {
        const rotation = row.rotation.slice('rotation-'.length);
        if (row.state === 'dispatched') inFlight.set(rotation, (inFlight.get(rotation) ?? 0) + Number(row.n));
        else {
          this.set({ rotation, state: row.state }, Number(row.n));
          if (row.state !== 'skipped') inFlight.set(rotation, (inFlight.get(rotation) ?? 0) - Number(row.n));
        }
      }
      for (const [rotation, n] of inFlight) this.set({ rotation, state: 'in-flight' }, Math.max(0, n));
    },
  });
  new Gauge({
    name: 'fleet_ledger_rotation_failed_logins',
    help: 'Logins credential rotations tried, by answer: accepted, refused (a failed login the BMC counted) or unreachable',
    labelNames: ['result'] as const,
    registers,
    async collect() {
      this.reset();
      const rows = await sql<{ result: string; n: string }>`
        SELECT data->>'result' AS result, count(*) AS n FROM ledger_events WHERE type = 'BmcLoginProbed' GROUP BY 1`.execute(ctx.db).catch(() => ({ rows: [] as Array<{ result: string; n: string }> }));
      for (const row of rows.rows) this.set({ result: row.result }, Number(row.n));
    },
  });
}
