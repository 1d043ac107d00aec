/**
 * Queries for analysts: the read models of `projections/`, every list cursor-paged. Routes the dashboard
 * reads also accept `?token=` (marked `queryToken`).
 *
 * Every route also answers as of a point of the log: `?asOf=<position or RFC 3339 instant>` reads the versioned read
 * models as of that point (`replay/as-of`), the answer carries `asOf: { position, recordedAt, instant }` and the
 * `fleet-ledger-as-of-position` / `fleet-ledger-as-of-recorded-at` headers, and "seconds since" count to the instant
 * asked. What history does not keep (last contact and miss counters, which every poll changes) is left out of an as-of
 * answer, and a route that needs it (overdue nodes, gaps, topology) answers 400 `ASOF_NOT_KEPT`. Without `asOf` the
 * answers are unchanged.
 *
 * With a read replica (`DATABASE_READ_URL`), answers without `asOf` are read on the replica and carry `readFrom` and
 * the `fleet-ledger-read-from` / `fleet-ledger-position` / `fleet-ledger-replica-*` headers (see `read-replica.ts`);
 * `?minPosition=` sends a read the replica has not caught up with to the primary.
 */
import type { ApiContext, ZodApp } from '../api-context.js';
import { alarmQueryRoutes } from './alarm-query-routes.js';
import { inventoryQueryRoutes } from './inventory-query-routes.js';
import { livenessQueryRoutes } from './liveness-query-routes.js';

export { asOfAnswerSchema, asOfApiError, asOfParameter, asOfPoint, minPositionParameter, readParameters, stateAsOf, type AsOfAnswer } from './query-support.js';

/** Every query route: the node view and liveness, inventory with drift and compliance, alarms. */
export function queryRoutes(app: ZodApp, ctx: ApiContext): void {
  livenessQueryRoutes(app, ctx);
  inventoryQueryRoutes(app, ctx);
  alarmQueryRoutes(app, ctx);
}
