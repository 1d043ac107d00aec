/**
 * The tests of the official client's suite that fail against fleet-ledger, each with why (the same list, with the
 * same reasons, is in src/kurrent/README.md). Keyed by file (relative to the suite's folder) then by the test's
 * full name (its describe blocks and its own name, joined by ` > `). `jest-compat.ts` holds each to failing: one that
 * passes fails the run until it is taken off. `limitMs`: how long it may run before its not ending counts as its
 * failure (a subscription waiting for an event the face never sends); default 5 s.
 */
import { suiteLocation } from './suite-location.js';

export interface ExpectedFailure {
  reason: string;
  limitMs?: number;
}

export function suiteRoot(): string {
  return suiteLocation().dir ?? '';
}

const systemEvents =
  "counts KurrentDB's own system events ($-typed events in $-streams a fresh KurrentDB writes at its start: $settings, $users, $scavenges...); a fresh ledger's log holds only what was appended to it";
const projections = 'needs server-side projections ($by_category, createProjection with linkTo or emit): not served (UNIMPLEMENTED)';
const httpApi =
  "writes a malformed event through KurrentDB's HTTP API (POST /streams/<stream>): the face serves gRPC and KurrentDB's health endpoints (/ping, /health/live) only, not the AtomPub API (fleet-ledger's own HTTP API is on its own port)";

const firstPositions =
  "takes a position from the first 60 events of a fresh node's log (KurrentDB's own system events); a fresh ledger's log is empty, so there is none";
const checkpointEvents =
  "counts more events than it appended: KurrentDB writes its subscriptions' checkpoints as events in its own log, which a subscription to $all then receives; the face keeps checkpoints in PostgreSQL, beside the log";
const follower = "connects to a follower node expecting NotLeaderError: each face is the leader of its one-node cluster (fleet-ledger's processes do not elect a KurrentDB leader)";
const longName =
  "uses a stream name whose stored form passes the ledger's 200 characters (270 bytes of Unicode, 3 characters a byte once mapped): refused with InvalidArgument";

/** Files whose `beforeAll` fails against fleet-ledger, with why (their tests are listed below with the same reason). */
export const expectedSetupFailures: Record<string, string> = {
  'persistentSubscription/listAllPersistentSubscriptions.test.ts': firstPositions,
  'persistentSubscription/listPersistentSubscriptionsToAll.test.ts': firstPositions,
};

export const expectedFailures: Record<string, Record<string, ExpectedFailure>> = {
  'streams/readAll.test.ts': {
    'readAll > should successfully read from $all > from start': { reason: systemEvents },
    'readAll > should successfully read from $all > backwards from end': { reason: systemEvents },
    'readAll > should successfully read from $all > resolve link tos': { reason: projections },
  },
  'streams/readStream.test.ts': {
    'readStream > should successfully read from stream > options > resolve link tos': { reason: projections },
  },
  'streams/subscribeToAll.test.ts': {
    'subscribeToAll > should subscribe to $all > from start': { reason: systemEvents },
  },
  'extra/http2-assertion-failure.test.ts': {
    'http2 assertion failure > can subscribe to a stream': {
      reason: "appends with the admin's credentials to a plaintext (insecure) node: the face refuses credentials sent in the clear, by design, and an anonymous caller appends nothing",
    },
  },
  'extra/oversize-event.test.ts': {
    'oversize events > oversize events': { reason: projections },
  },
  'persistentSubscription/listAllPersistentSubscriptions.test.ts': {
    'listAllPersistentSubscriptions > should list all persistent subscriptions': { reason: firstPositions },
    'listAllPersistentSubscriptions > should list info on a persistent subscription connection': { reason: firstPositions },
  },
  'persistentSubscription/listPersistentSubscriptionsToAll.test.ts': {
    'listPersistentSubscriptionsToAll > Supported (>=21.10.1) > should list persistent subscriptions on a stream': { reason: firstPositions },
    'listPersistentSubscriptionsToAll > Supported (>=21.10.1) > should list info on a persistent subscription connection': { reason: firstPositions },
  },
  'persistentSubscription/getPersistentSubscriptionToAllInfo.test.ts': {
    'getPersistentSubscriptionToAllInfo > Supported (>=21.10.1) > should get info on a persistent subscription to all': { reason: firstPositions },
  },
  'persistentSubscription/subscribeToPersistentSubscriptionToAll.test.ts': {
    'subscribeToPersistentSubscriptionToAll > Supported (>=21.10) > should return a readable stream > after the fact event listeners': { reason: checkpointEvents },
    'subscribeToPersistentSubscriptionToAll > Supported (>=21.10) > malformed events': { reason: httpApi },
    'subscribeToPersistentSubscriptionToAll > Supported (>=21.10) > should throw on follower node': { reason: follower },
  },
  'persistentSubscription/subscribeToPersistentSubscriptionToStream.test.ts': {
    'subscribeToPersistentSubscriptionToStream > malformed events': { reason: httpApi },
    'subscribeToPersistentSubscriptionToStream > should throw on follower node': { reason: follower },
    'subscribeToPersistentSubscriptionToStream > on system stream': { reason: projections },
  },
  'persistentSubscription/replayParkedMessagesToAll.test.ts': {
    'replayParkedMessagesToAll > Supported (>=21.10.1) > uri encoding': { reason: longName },
  },
  'persistentSubscription/replayParkedMessagesToStream.test.ts': {
    'replayParkedMessagesToStream > uri encoding': { reason: longName },
  },
};
