import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Kysely } from 'kysely';
import type { AsOfEngine } from '../../replay/as-of/index.js';
import type { AuditService } from '../../replay/audit/index.js';
import type { ClusterMembership } from '../cluster/index.js';
import type { EventStore, ProjectionStatusSource, DynamicDatabase } from '../ledger/index.js';
import type { PollerStatusSource } from '../poller/index.js';
import type { Simulator } from '../sim/index.js';
import type { BodyThread } from './body-parsing.js';
import type { ReadReplica } from './read-replica.js';
import { rolesReadingReadModels } from './authorization-policy.js';
import type { Principal, Role } from './tokens.js';

/** A fastify instance whose routes are typed by their zod schemas. */
export type ZodApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, ZodTypeProvider>;

/** What the routes read from and write to. */
export interface ApiContext {
  store: EventStore;
  runner: ProjectionStatusSource | null;
  poller: PollerStatusSource | null;
  simulator: Simulator | null;
  /** The read models' database (the store's): the primary. */
  db: Kysely<DynamicDatabase>;
  /**
   * Where read-only queries may go: the streaming replica's pool when `DATABASE_READ_URL` is set, else `db`. A read
   * through it states no position by itself; the query routes read through `replica.answer`, which does.
   */
  readDb: Kysely<DynamicDatabase>;
  /** The streaming replica the query routes read from (with its lag); null: every read goes to the primary. */
  replica: ReadReplica | null;
  now: () => Date;
  /** Readiness: a projection further behind the head than this is not ready. */
  maxLagPositions: number;
  /** Where heavy bodies (EBOM files, large JSON) are parsed: a thread of their own, never the request thread. */
  bodies: BodyThread;
  /** Observes the latency of the API's own appends (metrics). */
  timeAppend: <T>(run: () => Promise<T>) => Promise<T>;
  /** The transparency log (Merkle tree, signed checkpoints, proofs, exports); absent: its routes answer 404. */
  audit?: AuditService | null;
  /** Time travel for the query routes (`?asOf=`); absent: asOf answers 404. */
  asOf?: AsOfEngine | null;
  /** Live feeds (SSE) open at once; one more is answered 429. Default 32. */
  maxLiveFeeds?: number;
  /** Payload bytes in one page of `/v1/events` (default 4 MiB); the cursor continues after a cut page. */
  maxPageBytes?: number;
  /** This process's membership in the cluster of pollers (`/v1/cluster` names it as the one answering); absent: none. */
  cluster?: ClusterMembership | null;
}

/** Who may call a route. `queryToken` also accepts `?token=` (EventSource cannot set headers). */
export interface RouteAccess {
  roles: readonly Role[];
  queryToken?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export const intentRoles: readonly Role[] = ['operator'];
/** Who reads the read models: the authorization policy's answer (`readsReadModels`), operators among them. */
export const queryRoles: readonly Role[] = rolesReadingReadModels();
export const auditRoles: readonly Role[] = ['auditor'];
