/**
 * Holds one SSE stream per capable BMC and audits each by poll. Guarantees:
 * - a stream is held only where the BMC's session limit leaves room for a liveness check and a heavy read beside it
 *   (`minSessionLimit`), and the scheduler counts it (`holdsSession`);
 * - every pushed event is recorded once (duplicates by id, timestamp and message are dropped), stamped with the
 *   BMC's own timestamp, so events that arrive out of order are ordered by when they happened;
 * - a stream that cannot be trusted is recorded as a push gap with since when (`PushGapOpened`): silence while the
 *   BMC changed, a subscription the BMC no longer lists, nothing past its heartbeat, a refusal, an end; the node is
 *   polled again at once (`onFallback`) and its subscription re-created at its next visit (after a silent or refused
 *   one, one audit interval later: a BMC that keeps accepting and never sending is not reopened every minute).
 */
import { randomBytes } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { PushGapKind } from '../../../events/index.js';
import { DriverError, isDriverError, openEventStream, readPushOffer, RedfishClient, submitTestEvent, type PushedEventRecord } from '../../drivers/index.js';
import type { EventStore } from '../../ledger/index.js';
import type { Credential, PollTarget } from '../poll-target.js';
import { auditBmc, firstSystemPath } from './push-audit.js';
import { judgeAudit, judgeStall, newPushNode, streamContactAt, type PushGap, type PushNode } from './push-node.js';
import type { PushPolicy } from './push-policy.js';
import { PushRecorder } from './push-recorder.js';
import { RecentEvents } from './recent-events.js';

export interface PushKeeperOptions {
  store: EventStore;
  policy: PushPolicy;
  requestTimeoutMs: number;
  clock?: () => number;
  dispatcherFor?: (target: PollTarget) => Dispatcher | undefined;
  headers?: Record<string, string>;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** The node's push cannot be trusted: poll it now. */
  onFallback: (nodeId: string) => void;
}

/** What a push visit asks before every request (`RedfishClientOptions.guard`), and the headers naming the poller. */
export interface PushVisitGuards {
  guard?: () => boolean;
  headers?: Record<string, string>;
}

export interface PushStats {
  streamsOpen: number;
  streamsOpened: number;
  gaps: Record<PushGapKind, number>;
  eventsRecorded: number;
  duplicatesDropped: number;
  malformed: number;
  /** Milliseconds from an event's own timestamp to its being stored, the latest (at most 10,000). */
  eventToLedgerMs: number[];
}

export class PushKeeper {
  readonly #nodes = new Map<string, PushNode>();
  readonly #recent = new Map<string, RecentEvents>();
  readonly #recorder: PushRecorder;
  readonly #clock: () => number;
  readonly #sweep: NodeJS.Timeout;
  readonly #counters = { streamsOpened: 0, duplicatesDropped: 0, malformed: 0 };
  readonly #gaps: Record<PushGapKind, number> = { silent: 0, 'subscription-lost': 0, stalled: 0, refused: 0, ended: 0 };
  readonly #eventToLedgerMs: number[] = [];
  #lastSweepAt: number | undefined;

  constructor(private readonly options: PushKeeperOptions) {
    this.#clock = options.clock ?? Date.now;
    this.#recorder = new PushRecorder(options.store, options.log);
    this.#sweep = setInterval(() => this.sweep(this.#clock()), options.policy.sweepMs);
    this.#sweep.unref();
  }

  get policy(): PushPolicy {
    return this.options.policy;
  }

  node(nodeId: string): PushNode {
    let node = this.#nodes.get(nodeId);
    if (!node) {
      node = newPushNode(nodeId);
      this.#nodes.set(nodeId, node);
    }
    return node;
  }

  /** True while a stream to the node's BMC is held: it takes one of the BMC's sessions. */
  holdsSession(nodeId: string): boolean {
    return this.#nodes.get(nodeId)?.stream !== undefined;
  }

  /** The last contact the node's stream proves (a record within its heartbeat's grace), or undefined. */
  contactAt(nodeId: string, now: number): number | undefined {
    const node = this.#nodes.get(nodeId);
    return node ? streamContactAt(node, now, this.options.policy.heartbeatGrace) : undefined;
  }

  auditDue(nodeId: string, now: number): boolean {
    const audited = this.#nodes.get(nodeId)?.audited;
    return audited === undefined || now - audited.at >= this.options.policy.auditIntervalS * 1000;
  }

  /** Whether the node's next check should be a push visit: discovery, a re-subscription, or an audit. */
  wantsVisit(nodeId: string, now: number): boolean {
    const node = this.node(nodeId);
    switch (node.status) {
      case 'unknown':
        return true;
      case 'none':
        return false;
      case 'streaming':
        return this.auditDue(nodeId, now);
      case 'fallback':
        return now >= node.retryAt;
      default: {
        const unreachable: never = node.status;
        throw new Error(`unknown push status ${String(unreachable)}`);
      }
    }
  }

  /**
   * One push visit, in one session: learns the BMC's EventService (first time), opens its stream (when none is held)
   * and audits it. Throws the `DriverError` of a request that failed; the caller polls as usual then.
   */
  async visit(target: PollTarget, credential: Credential, now: number, guards: PushVisitGuards = {}): Promise<void> {
    const node = this.node(target.nodeId);
    const dispatcher = this.options.dispatcherFor?.(target);
    const headers = { ...this.options.headers, ...guards.headers };
    const client = new RedfishClient({ baseUrl: target.baseUrl, username: credential.username, password: credential.password, authMode: 'basic', maxConcurrency: 1, requestTimeoutMs: this.options.requestTimeoutMs, headers, ...(dispatcher ? { dispatcher } : {}), ...(guards.guard ? { guard: guards.guard } : {}) });
    try {
      await client.login(); // basic auth: sets the header, opens no session
      if (node.sseUri === undefined) {
        const offer = await readPushOffer(client);
        if (offer.kind === 'none') {
          node.status = 'none';
          node.reason = offer.reason;
          return;
        }
        node.sseUri = offer.sseUri;
        node.subscriptionsPath = offer.subscriptionsPath;
        node.testEventTarget = offer.testEventTarget;
        node.systemPath = await firstSystemPath(client);
      }
      if (node.status !== 'streaming') {
        // Opened only while the guard allows (the lease held, no rotation fence), as any request of the visit.
        if (guards.guard && !guards.guard()) throw new DriverError('DRIVER_FENCED', `no stream opened to ${target.baseUrl}: the right to talk to this BMC has ended`, { url: target.baseUrl });
        if (!(await this.#open(node, target, credential, dispatcher, headers, now))) return;
      }
      await this.#audit(node, client, now);
    } finally {
      await client.close();
    }
  }

  /**
   * Looks for stalled streams. A sweep that comes late (this process's event loop was held up) judges nothing: what
   * the streams sent meanwhile may still wait, unread, in the sockets, and silence of ours is not the BMC's.
   */
  sweep(now: number): void {
    const late = this.#lastSweepAt !== undefined && now - this.#lastSweepAt > 2 * this.options.policy.sweepMs;
    this.#lastSweepAt = now;
    if (late) return;
    for (const node of this.#nodes.values()) {
      const gap = judgeStall(node, now, this.options.policy.heartbeatGrace);
      if (gap) this.#fallback(node, gap, now, now);
    }
  }

  remove(nodeId: string): void {
    this.#nodes.get(nodeId)?.stream?.close();
    this.#nodes.delete(nodeId);
    this.#recent.delete(nodeId);
  }

  stats(): PushStats {
    const open = [...this.#nodes.values()].filter((node) => node.stream !== undefined).length;
    return { streamsOpen: open, streamsOpened: this.#counters.streamsOpened, gaps: { ...this.#gaps }, eventsRecorded: this.#recorder.counters.eventsRecorded, duplicatesDropped: this.#counters.duplicatesDropped, malformed: this.#counters.malformed, eventToLedgerMs: [...this.#eventToLedgerMs] };
  }

  /** Resolves when every event and gap handed over so far is stored. */
  settled(): Promise<void> {
    return this.#recorder.settled();
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    for (const node of this.#nodes.values()) node.stream?.close();
    await this.#recorder.settled();
  }

  async #open(node: PushNode, target: PollTarget, credential: Credential, dispatcher: Dispatcher | undefined, headers: Record<string, string>, now: number): Promise<boolean> {
    try {
      const stream = await openEventStream({
        baseUrl: target.baseUrl,
        uri: node.sseUri ?? '',
        username: credential.username,
        password: credential.password,
        connectTimeoutMs: this.options.requestTimeoutMs,
        headers,
        ...(dispatcher ? { dispatcher } : {}),
        onRecord: (record) => this.#received(node, record),
        onMalformed: (reason) => {
          this.#counters.malformed += 1;
          this.options.log?.('a pushed event could not be read', { nodeId: node.nodeId, reason });
        },
      });
      Object.assign(node, { status: 'streaming', stream, lastBeatAt: now, eventsSinceAudit: 0, audited: undefined, heartbeatMs: undefined });
      this.#counters.streamsOpened += 1;
      void stream.ended.then((end) => {
        if (node.stream !== stream || end.kind === 'closed') return;
        this.#fallback(node, { kind: 'ended', since: this.#clock(), detail: end.kind === 'failed' ? end.error.message : 'the BMC closed the stream' }, this.#clock(), this.#clock());
      });
      return true;
    } catch (error) {
      if (!isDriverError(error) || (error.code !== 'DRIVER_BMC_UNAVAILABLE' && error.code !== 'DRIVER_RATE_LIMITED')) throw error;
      this.#fallback(node, { kind: 'refused', since: now, detail: error.message }, now, now + this.options.policy.auditIntervalS * 1000);
      return false;
    }
  }

  async #audit(node: PushNode, client: RedfishClient, now: number): Promise<void> {
    const first = node.audited === undefined;
    const reading = await auditBmc(client, node);
    let gap = judgeAudit(node, reading);
    if (gap?.kind === 'silent') {
      // An event for the change may be on its way: silence is judged once it has had time to arrive.
      await new Promise((resolve) => setTimeout(resolve, this.options.policy.eventGraceMs));
      gap = judgeAudit(node, reading);
    }
    // A stream that said nothing since the last audit, and has no heartbeat to show it works, is asked to prove it.
    if (!gap && node.eventsSinceAudit === 0 && reading.heartbeatMs === undefined) gap = await this.#probe(node, client, now);
    if (gap) {
      const retryAt = gap.kind === 'silent' ? now + this.options.policy.auditIntervalS * 1000 : now;
      this.#fallback(node, gap, now, retryAt);
      return;
    }
    node.audited = { at: now, health: reading.health, powerState: reading.powerState };
    node.eventsSinceAudit = 0;
    node.heartbeatMs = reading.heartbeatMs;
    if (first) this.#recorder.opened(node.nodeId, node.sseUri ?? '', reading.heartbeatMs, now);
  }

  /**
   * Asks the BMC for a test event and waits `eventGraceMs` for it on the stream: a stream that accepted the
   * subscription and sends nothing is found even when nothing about the BMC changes. A BMC that refuses the action
   * for good is not asked again (its silence is then found only by a change, or a heartbeat).
   */
  async #probe(node: PushNode, client: RedfishClient, now: number): Promise<PushGap | undefined> {
    const target = node.testEventTarget;
    if (target === undefined) return undefined;
    const token = randomBytes(6).toString('hex');
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<boolean>((resolve) => {
      node.probe = { token, answered: () => resolve(true) };
      timer = setTimeout(() => resolve(false), this.options.policy.eventGraceMs);
    });
    try {
      await submitTestEvent(client, target, token);
    } catch (error) {
      clearTimeout(timer);
      node.probe = undefined;
      if (isDriverError(error) && !error.retryable) node.testEventTarget = undefined;
      else throw error;
      return undefined;
    }
    const came = await answered;
    clearTimeout(timer);
    node.probe = undefined;
    if (came) return undefined;
    return { kind: 'silent', since: node.audited?.at ?? now, detail: `asked the BMC for a test event: none came on the stream within ${this.options.policy.eventGraceMs} ms` };
  }

  #received(node: PushNode, record: PushedEventRecord): void {
    const receivedAt = this.#clock();
    node.lastBeatAt = receivedAt;
    if (record.heartbeat) return;
    // A test event asked for by an audit (this one's, or a late one's) proves the stream works and is not recorded.
    if (record.message?.startsWith('fleet-ledger push probe ')) {
      if (node.probe && record.message.endsWith(node.probe.token)) node.probe.answered();
      return;
    }
    let recent = this.#recent.get(node.nodeId);
    if (!recent) {
      recent = new RecentEvents();
      this.#recent.set(node.nodeId, recent);
    }
    if (!recent.admit(`${record.eventId}|${record.timestamp ?? ''}|${record.messageId}`)) {
      this.#counters.duplicatesDropped += 1;
      return;
    }
    node.lastEventAt = receivedAt;
    node.eventsSinceAudit += 1;
    const happened = record.timestamp !== undefined ? Date.parse(record.timestamp) : Number.NaN;
    this.#recorder.event(node.nodeId, record, receivedAt, (storedAt) => {
      if (Number.isNaN(happened)) return;
      this.#eventToLedgerMs.push(storedAt - happened);
      if (this.#eventToLedgerMs.length > 10_000) this.#eventToLedgerMs.shift();
    });
  }

  #fallback(node: PushNode, gap: PushGap, now: number, retryAt: number): void {
    const stream = node.stream;
    node.stream = undefined;
    stream?.close();
    node.status = 'fallback';
    node.reason = gap.kind;
    node.retryAt = retryAt;
    node.gaps += 1;
    node.lastGap = { kind: gap.kind, since: gap.since, detectedAt: now };
    this.#gaps[gap.kind] += 1;
    this.#recorder.gap(node.nodeId, gap, now);
    this.options.log?.('push gap: the node is polled again', { nodeId: node.nodeId, kind: gap.kind });
    this.options.onFallback(node.nodeId);
  }
}
