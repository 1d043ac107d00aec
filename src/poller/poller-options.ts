import type { PollOutcomeKind } from '../../events/index.js';
import type { EventStore } from '../ledger/index.js';
import type { SiteTlsPolicy } from './bmc-transports.js';
import type { PollPolicy } from './poll-policy.js';
import type { PollTimers } from './poll-timers.js';
import type { CredentialProvider, PollWork } from './poll-target.js';
import type { Visitor } from './redfish-visitor.js';
import type { PushPolicy } from './push/push-policy.js';

export interface PollerOptions {
  store: EventStore;
  credentials: CredentialProvider;
  policy?: Partial<PollPolicy>;
  visitor?: Visitor;
  /** Milliseconds since the epoch; injected so tests and replays control time. */
  clock?: () => number;
  /** The timers that drive the poller (default: the process's); a test's manual clock supplies both. */
  timers?: PollTimers;
  random?: () => number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** Most poll outcomes kept while the ledger cannot take them (default 1,000,000, about 60 MB). */
  maxPendingOutcomes?: number;
  /**
   * Sites whose BMCs may be reached over plain http (`*`: every site). Elsewhere a credential goes over https only.
   * Either way it goes only to the endpoints it is bound to (`Credential.endpoints`).
   */
  plainHttpSites?: readonly string[];
  /**
   * How each site's HTTPS BMCs are trusted (`*`: every site not named): `pin` (trust on first use; the default), a CA
   * bundle, or `insecure` (nothing verified, logged once per site); and the oldest TLS version allowed.
   */
  siteTls?: Readonly<Record<string, SiteTlsPolicy>>;
  /** Called for every recorded outcome (metrics, benchmarks). */
  onOutcome?: (nodeId: string, work: PollWork, outcome: PollOutcomeKind, latencyMs: number, at: number) => void;
  /**
   * Cluster mode (several processes on one database): the poller visits only the BMCs of the shards it was given
   * (`activateShard`), under that shard's lease; every request is preceded by `mayRequest`, every outcome and
   * observation carries the lease (the ledger refuses a stale epoch), and a refused append gives the shard up.
   */
  cluster?: PollerCluster;
  /** Hold an audited SSE stream to every BMC that offers one (`docs/push.md`); off when absent. */
  push?: PushPolicy;
}

/** What the poller asks of its cluster membership (`ClusterMember` implements it). */
export interface PollerCluster {
  readonly processId: string;
  shardOf(site: string, nodeId: string): string;
  mayRequest(shard: string, epoch: number): boolean;
  fenced(shard: string, epoch: number): void;
}
