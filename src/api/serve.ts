/**
 * Starts the API for the `start` demo: tokens from FLEET_LEDGER_TOKENS_FILE / FLEET_LEDGER_TOKENS, else
 * random demo tokens (printed once, stored 0600 in the data folder); listens on 127.0.0.1:8080 by default.
 */
import type { AsOfEngine } from '../../replay/as-of/index.js';
import type { AuditService } from '../../replay/audit/index.js';
import type { ClusterMembership } from '../cluster/index.js';
import { redactConnectionString, type EventStore, type ProjectionStatusSource } from '../ledger/index.js';
import { logger as processLogger } from '../logger.js';
import type { PollerStatusSource } from '../poller/index.js';
import type { Simulator } from '../sim/index.js';
import { buildApi } from './build-api.js';
import type { ZodApp } from './api-context.js';
import { apiTokens, demoTokenListing, type TokenEntry, type TokenTable } from './tokens.js';

export interface ServeApiOptions {
  store: EventStore;
  runner?: ProjectionStatusSource | null;
  poller?: PollerStatusSource | null;
  simulator?: Simulator | null;
  /** Default 8080; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1: expose on purpose, never by accident. */
  host?: string;
  /** Where demo tokens are stored (`<dataDir>/api-tokens.json`). */
  dataDir?: string;
  /** The transparency log the /v1/audit routes serve. */
  audit?: AuditService | null;
  asOf?: AsOfEngine | null;
  /** This process's cluster membership (`/v1/cluster`, cluster metrics). */
  cluster?: ClusterMembership | null;
  /**
   * A streaming replica the query routes read from (default: the DATABASE_READ_URL environment variable; none:
   * every read goes to the primary). Logged without its password.
   */
  readDatabaseUrl?: string | null;
  /** Tokens added to the configured ones (a site's forwarder token for its centre). */
  extraTokens?: readonly TokenEntry[];
  /** Where the one-time token listing goes (default stdout). */
  print?: (text: string) => void;
}

export interface ServedApi {
  app: ZodApp;
  url: string;
  /** The tokens the API authenticates with (the KurrentDB face uses the same). */
  tokens: TokenTable;
  close(): Promise<void>;
}

export async function serveApi(options: ServeApiOptions): Promise<ServedApi> {
  const print = options.print ?? ((text: string) => process.stdout.write(text));
  // Demo tokens are made now and printed once the API listens: a token shown is a token that works at once.
  const { table: apiTable, demo } = apiTokens(options.dataDir);
  const tokens = options.extraTokens?.length ? apiTable.with(options.extraTokens) : apiTable;
  const readDatabaseUrl = options.readDatabaseUrl === undefined ? process.env.DATABASE_READ_URL || null : options.readDatabaseUrl;
  const app = await buildApi({
    store: options.store,
    runner: options.runner ?? null,
    poller: options.poller ?? null,
    simulator: options.simulator ?? null,
    tokens,
    logger: processLogger.child({ component: 'api' }),
    processMetrics: true,
    audit: options.audit ?? null,
    asOf: options.asOf ?? null,
    cluster: options.cluster ?? null,
    readDatabaseUrl,
  });
  const host = options.host ?? '127.0.0.1';
  const address = await app.listen({ port: options.port ?? 8080, host });
  const url = address.replace('[::1]', 'localhost');
  if (demo) print(demoTokenListing('API demo tokens', demo));
  processLogger.info({ url, docs: `${url}/docs` }, `API listening on ${url} (dashboard: ${url}/?token=<operator, analyst or admin token>)`);
  const reads = readDatabaseUrl ? redactConnectionString(readDatabaseUrl) : null;
  processLogger.info({ readReplica: reads }, reads ? `query routes read the replica ${reads} (intents, the log, rollouts and history: the primary)` : 'query routes read the primary (no DATABASE_READ_URL)');
  return { app, url, tokens, close: () => app.close() };
}
