/**
 * What the poller knows of one node's push: whether its BMC offers a stream, the stream held, what the stream has
 * said since the last audit, and the last audit that agreed with the BMC. Judged by the pure functions below, so
 * the rules (when silence is a gap, when a stream is stalled) are tested without a BMC.
 */
import type { PushGapKind } from '../../../events/index.js';
import type { EventStream } from '../../drivers/index.js';

export type PushStatus = 'unknown' | 'none' | 'streaming' | 'fallback';

/** What an audit reads of the BMC: the SSE subscriptions it lists, and the state it reports. */
export interface AuditReading {
  listedSse: number;
  heartbeatMs: number | undefined;
  health: string | undefined;
  powerState: string | undefined;
}

export interface PushNode {
  nodeId: string;
  status: PushStatus;
  /** Why the BMC offers no stream (`none`), or why the last stream failed (`fallback`). */
  reason?: string;
  sseUri?: string;
  subscriptionsPath?: string;
  systemPath?: string;
  /** Where the BMC takes `SubmitTestEvent` (undefined: it offers none, or refused one). */
  testEventTarget?: string | undefined;
  /** A test event asked for and not come yet: its token, and what is told when it comes. */
  probe?: { token: string; answered: () => void };
  stream?: EventStream;
  heartbeatMs?: number | undefined;
  /** Last record of any kind on the stream (heartbeats included), and last event proper. */
  lastBeatAt?: number;
  lastEventAt?: number;
  /** Events proper received since the last audit. */
  eventsSinceAudit: number;
  /** The last audit whose reading the stream accounted for. */
  audited?: { at: number; health: string | undefined; powerState: string | undefined };
  /** The subscription members the last audit read (their paths, one per line), and what they said. */
  subscriptions?: { key: string; listedSse: number; heartbeatMs: number | undefined };
  /** In fallback: when the subscription is tried again. */
  retryAt: number;
  gaps: number;
  lastGap?: { kind: PushGapKind; since: number; detectedAt: number };
}

export interface PushGap {
  kind: PushGapKind;
  since: number;
  detail: string;
}

export function newPushNode(nodeId: string): PushNode {
  return { nodeId, status: 'unknown', eventsSinceAudit: 0, retryAt: 0, gaps: 0 };
}

/**
 * What an audit shows: the BMC no longer lists an SSE subscription while a stream is held (`subscription-lost`, since
 * the last audit that saw it), or the BMC's state moved since the last audit and the stream brought no event meanwhile
 * (`silent`). Undefined when the stream accounts for what the BMC shows.
 */
export function judgeAudit(node: PushNode, reading: AuditReading): PushGap | undefined {
  const since = node.audited?.at ?? node.lastBeatAt ?? 0;
  if (reading.listedSse === 0) return { kind: 'subscription-lost', since, detail: 'the BMC lists no SSE subscription while the ledger holds a stream' };
  const before = node.audited;
  if (before && node.eventsSinceAudit === 0 && (before.health !== reading.health || before.powerState !== reading.powerState)) {
    return { kind: 'silent', since, detail: `the BMC changed (health ${before.health ?? '?'} to ${reading.health ?? '?'}, power ${before.powerState ?? '?'} to ${reading.powerState ?? '?'}) and its stream sent no event` };
  }
  return undefined;
}

/** A stream with a heartbeat that sent nothing for `graceFactor` heartbeats is stalled, since its last record. */
export function judgeStall(node: PushNode, now: number, graceFactor: number): PushGap | undefined {
  if (node.status !== 'streaming' || node.heartbeatMs === undefined) return undefined;
  const last = node.lastBeatAt ?? 0;
  if (now - last <= node.heartbeatMs * graceFactor) return undefined;
  return { kind: 'stalled', since: last, detail: `nothing on the stream for ${Math.round(now - last)} ms, its heartbeat is every ${node.heartbeatMs} ms` };
}

/** The last moment a stream proved contact (a record within its heartbeat's grace), or undefined. */
export function streamContactAt(node: PushNode, now: number, graceFactor: number): number | undefined {
  if (node.status !== 'streaming' || node.heartbeatMs === undefined || node.lastBeatAt === undefined) return undefined;
  return now - node.lastBeatAt <= node.heartbeatMs * graceFactor ? node.lastBeatAt : undefined;
}
