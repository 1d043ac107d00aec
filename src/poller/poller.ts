import type { PollOutcomeKind } from '../../events/index.js';
import { applyCredentialEvent, loginCredentialOf, type NodeCredential } from '../credentials/index.js';
import { isDriverError } from '../drivers/index.js';
import { CredentialGate } from './credential-gate.js';
import { credentialFingerprint, CredentialLatches } from './credential-latches.js';
import { DispatchQueues } from './dispatch-queues.js';
import { clusterVisitOptions, cutByHandOver, leaseAllows } from './lease-guard.js';
import { ObservationAppender } from './observation-appender.js';
import { OutcomeRecorder } from './outcome-recorder.js';
import { defaultPollPolicy, type PollPolicy } from './poll-policy.js';
import { fencedCheck, type FencedCheckHost } from './fenced-check.js';
import { delay, systemTimers, type PollTimers, type TimerHandle } from './poll-timers.js';
import { pollWorks, type Credential, type PollTarget, type PollWork } from './poll-target.js';
import { applyPollerIntent, pollerIntentTypes, type PollerIntentSink } from './poller-intents.js';
import type { PollerOptions } from './poller-options.js';
import { targetStats, type PollerStats } from './poller-stats.js';
import { validatorsOf, ValidatorKeeper } from './read-validators.js';
import { BmcTransports } from './bmc-transports.js';
import { conditionalWorks, ProtocolVisitor, RedfishVisitor, type Visitor, type VisitResult } from './redfish-visitor.js';
import { firstDue, initialTargetState, leaseOf, type ActiveShard, type TargetState } from './target-state.js';
import { backoffFactor, sessionLimit as targetSessionLimit } from './target-limits.js';
import { boundedVisit, expandedRequestTimedOut, visitBoundMs } from './visit-bound.js';
import { latchesCredentials, outcomeOfError, retryWithinVisit } from './visit-outcome.js';
import { pollerPush, pushCheck, type PushCheckHost } from './push/index.js';

export { credentialFingerprint } from './credential-latches.js';
export type { PollerCluster, PollerOptions } from './poller-options.js';
export { failureBucketNames, worstTargetsShown, type FailureBucket, type PollerStats } from './poller-stats.js';
export { visitBoundMs } from './visit-bound.js';

/** What the API reads of a poller, on its thread or another (`ThreadedPoller`): metrics and the shards it polls. */
export type PollerStatusSource = Pick<Poller, 'stats' | 'activeShards'>;

/**
 * The per-target poll scheduler (architecture decision 2). Guarantees:
 * - one visit per BMC at a time, and a visit opens at most one session, so no BMC ever receives more
 *   sessions from the poller than its limit (which is at least 1);
 * - a failing BMC receives less traffic: no heavy work while it fails, no retry on timeouts or session
 *   refusals, its liveness check stretched after `breakerThreshold` consecutive failures, and doubled
 *   after each session-limit refusal;
 * - an authentication failure latches the target: no further login until the credential changes or an
 *   operator clears the latch (`LockoutLatchCleared`); the latch is recorded as `LockoutLatched`;
 * - an HTTPS BMC's first certificate is pinned and recorded (`BmcCertificateObserved`); another one later sends no
 *   credential, is recorded (`BmcCertificateChanged`) and latches the target until an operator accepts it
 *   (`BmcCertificateAccepted`) or the site names a CA (`BmcTransports`);
 * - every visit's outcome is recorded (batched per site), observations only when their content changes;
 * - never-contacted targets go first, then the most overdue; work is spread with jitter under a global
 *   concurrency and rate budget.
 */
export class Poller {
  readonly #states = new Map<string, TargetState>();
  /** Lists of paths of conditional reads, shared by every BMC that served the same resources (one per model, mostly). */
  readonly #validators = new ValidatorKeeper();
  readonly #credentials: CredentialGate;
  /** Lockout latches: those the ledger has not taken yet, and (cluster mode) those of targets not polled here. */
  readonly #latches: CredentialLatches;
  readonly #observations: ObservationAppender;
  /** The liveness checks and heavy reads due, each in its lane (`dispatch-queues.ts`). */
  readonly #queues: DispatchQueues;
  #heavyInFlight = 0;
  readonly #policy: PollPolicy;
  readonly #visitor: Visitor;
  /** HTTPS BMCs: kept-alive connections, pinned certificates and certificate latches. */
  readonly #transports: BmcTransports;
  readonly #clock: () => number;
  readonly #random: () => number;
  readonly #recorder: OutcomeRecorder;
  #inFlight = 0;
  #visits = 0;
  #tokens = 0;
  #lastRefill = 0;
  readonly #timers: PollTimers;
  #timer: TimerHandle | null = null;
  #flushTimer: TimerHandle | null = null;
  #running = false;
  readonly #pending = new Set<Promise<void>>();
  /** Cluster mode: every registered target, polled or not, and the shards being polled. */
  readonly #known = new Map<string, PollTarget>();
  readonly #active = new Map<string, ActiveShard>();
  #visitsAbandoned = 0;
  /** What following the intents does here. */
  readonly #intentSink: PollerIntentSink = {
    addTarget: (target, options) => this.addTarget(target, options),
    removeTarget: (nodeId) => this.removeTarget(nodeId),
    setMaintenance: (nodeId, until) => this.setMaintenance(nodeId, until),
    latched: (nodeId, fingerprint) => {
      if (this.options.cluster) this.#latches.known.set(nodeId, fingerprint);
      const state = this.#states.get(nodeId);
      if (state) state.latch = { fingerprint };
    },
    clearLatch: (nodeId) => this.clearLatch(nodeId),
    certificateObserved: (nodeId, fingerprint, trust) => this.#transports.observed(nodeId, fingerprint, trust),
    certificateChanged: (nodeId, presented) => this.#transports.changed(nodeId, presented),
    certificateAccepted: (nodeId, fingerprint) => this.#transports.accepted(nodeId, fingerprint),
    credentialEvent: (event) => this.#credentialEvent(event),
    log: (message, fields) => this.options.log?.(message, fields),
  };
  /** Cluster mode: maintenance windows of targets not polled here, applied when their shard comes. */
  readonly #knownMaintenance = new Map<string, number>();
  /** The credential version in force and the rotation fence of every node the log named (`src/credentials/in-force.ts`). */
  readonly #nodeCredentials = new Map<string, NodeCredential>();
  /** Liveness checks of fenced nodes (rotation under way): answered without a login, counted as contact. */
  #fencedChecks = 0;
  /** Push (`docs/push.md`): one audited SSE stream per capable BMC, when the options ask for it. */
  readonly #push: PushCheckHost | undefined;

  constructor(private readonly options: PollerOptions) {
    this.#policy = { ...defaultPollPolicy, ...options.policy, intervals: { ...defaultPollPolicy.intervals, ...options.policy?.intervals } };
    this.#clock = options.clock ?? Date.now;
    this.#timers = options.timers ?? systemTimers;
    this.#queues = new DispatchQueues(this.#states, (state) => leaseAllows(options.cluster, state), (target) => targetSessionLimit(this.#policy, target) - (this.#push?.keeper.holdsSession(target.nodeId) ? 1 : 0));
    this.#transports = new BmcTransports({
      store: options.store,
      ...(options.siteTls ? { sites: options.siteTls } : {}),
      // A connection outlives the gap between two checks (a BMC's own shorter keep-alive wins).
      keepAliveMs: 2 * 60_000 + 10_000,
      connectTimeoutMs: this.#policy.requestTimeoutMs,
      clock: this.#clock,
      ...(options.log ? { log: options.log } : {}),
      leaseOf: (nodeId) => {
        const state = this.#states.get(nodeId);
        return state ? leaseOf(state) : undefined;
      },
    });
    this.#visitor = options.visitor ?? new ProtocolVisitor(new RedfishVisitor(this.#transports));
    this.#random = options.random ?? Math.random;
    this.#recorder = new OutcomeRecorder(options.store, 20_000, options.maxPendingOutcomes ?? 1_000_000, (message, fields) => options.log?.(message, fields), (shard, epoch) => options.cluster?.fenced(shard, epoch));
    this.#credentials = new CredentialGate(options);
    this.#latches = new CredentialLatches(options.store, options.cluster !== undefined, (message, fields) => options.log?.(message, fields));
    this.#observations = new ObservationAppender(options.store, options.cluster, (message, fields) => options.log?.(message, fields));
    this.#push = pollerPush(options, this.#policy, this.#transports, this.#states, { clock: () => this.#clock(), record: (state, outcome, latencyMs, at) => this.#record(state.target, 'liveness', outcome, latencyMs, at, leaseOf(state)), enqueue: (state) => this.#enqueue(state), guards: (state) => this.#visitGuards(state) });
  }

  get policy(): PollPolicy {
    return this.#policy;
  }

  /** Adds (or updates) a target while running; a new target is visited before any overdue one. */
  addTarget(target: PollTarget, options: { spreadFirstVisit?: boolean; firstAt?: number; spreadMs?: number } = {}): void {
    let shard: string | undefined;
    let active: ActiveShard | undefined;
    if (this.options.cluster) {
      shard = this.options.cluster.shardOf(target.site, target.nodeId);
      this.#known.set(target.nodeId, target);
      active = this.#active.get(shard);
      if (!active) return; // another process's shard (or none's yet): known, not polled
    }
    const existing = this.#states.get(target.nodeId);
    if (existing) {
      // Another BMC answers at another address: what was known of the old one's answers does not apply.
      if (existing.target.baseUrl !== target.baseUrl) {
        delete existing.livenessEtag;
        delete existing.readValidators;
      }
      existing.target = target;
      return;
    }
    const now = Math.max(this.#clock(), options.firstAt ?? 0);
    const state = initialTargetState(target, shard !== undefined && active ? { shard, epoch: active.epoch } : undefined, firstDue(target, now, this.#policy, this.#random, options));
    const latch = this.#latches.known.get(target.nodeId);
    if (latch !== undefined) state.latch = { fingerprint: latch };
    state.maintenanceUntil = this.#knownMaintenance.get(target.nodeId) ?? 0;
    const credential = this.#nodeCredentials.get(target.nodeId);
    if (credential) state.credential = credential;
    this.#states.set(target.nodeId, state);
    this.#enqueue(state);
  }

  /** Stops polling a target (decommissioned); an in-flight visit finishes and is recorded. */
  removeTarget(nodeId: string): void {
    this.#states.delete(nodeId);
    this.#push?.keeper.remove(nodeId);
    this.#transports.release(nodeId);
    this.#known.delete(nodeId);
    this.#latches.known.delete(nodeId);
    this.#knownMaintenance.delete(nodeId);
    this.#nodeCredentials.delete(nodeId);
  }

  /**
   * A rotation fenced a node, or put a credential version in force on it. Fenced: no login from now on (a visit in
   * flight sends nothing more: its guard asks before every request), heavy reads wait. Lifted: the version in force
   * is the one the rotation proved, and the node's heavy reads are due again.
   */
  #credentialEvent(event: Parameters<PollerIntentSink['credentialEvent']>[0]): void {
    const nodeId = applyCredentialEvent(this.#nodeCredentials, event);
    if (nodeId === undefined) return;
    const state = this.#states.get(nodeId);
    if (!state) return;
    const wasFenced = state.credential?.fenced === true;
    state.credential = this.#nodeCredentials.get(nodeId);
    state.credentialWaits = 0;
    if (wasFenced && !state.credential?.fenced) {
      state.due.liveness = Math.min(state.due.liveness, this.#clock());
      this.#enqueue(state);
    }
  }

  /** The credential to log in to the node's BMC with now: the version in force; 'fenced' while a rotation holds it. */
  #credentialOf(state: TargetState): Credential | 'fenced' | undefined {
    const login = loginCredentialOf(state.credential, state.target.credentialRef);
    if (login.kind === 'fenced') return 'fenced';
    return this.#credentials.credentialFor(state.target, login);
  }

  /** True when the node's credential changed (fenced, another version) since a visit took `used`: its failure latches nothing. */
  #credentialMoved(state: TargetState, used: Credential): boolean {
    const now = this.#credentialOf(state);
    return now === 'fenced' || now === undefined || now.version !== used.version;
  }

  /**
   * Cluster mode: this process now holds the shard's lease (epoch) and may visit its BMCs from `pollAfter` on. Their
   * first liveness checks are spread over `spreadMs` (default half their interval, at most 15 s), so a shard
   * taken over from a dead process is contacted again well within one interval; heavy reads follow within
   * `firstReadSpreadS`, as for any target seen for the first time.
   */
  activateShard(shard: string, epoch: number, pollAfter: number, spreadMs?: number): number {
    const previous = this.#active.get(shard);
    if (previous) previous.controller.abort();
    this.#active.set(shard, { epoch, controller: new AbortController(), visits: previous?.visits ?? new Set() });
    let added = 0;
    for (const target of this.#known.values()) {
      if (this.options.cluster!.shardOf(target.site, target.nodeId) !== shard) continue;
      this.#states.delete(target.nodeId);
      this.addTarget(target, { spreadFirstVisit: true, firstAt: pollAfter, spreadMs: spreadMs ?? Math.min(15_000, (target.expectedIntervalS * 1000) / 2) });
      added += 1;
    }
    return added;
  }

  /**
   * Cluster mode: stops visiting the shard's BMCs (visits in flight are cut; a session open is logged out while the
   * lease lasts), waits for its visits to end and flushes what was recorded under the lease. Resolves when nothing
   * more will be sent or written under it.
   */
  async deactivateShard(shard: string): Promise<void> {
    const active = this.#active.get(shard);
    if (!active) return;
    this.#active.delete(shard);
    active.controller.abort(new Error(`shard ${shard} handed over`));
    // Its streams are closed too: the shard's new owner holds its own, and a BMC's sessions are counted by one process.
    for (const [nodeId, state] of this.#states) if (state.shard === shard && this.#states.delete(nodeId)) this.#push?.keeper.remove(nodeId);
    await Promise.all([...active.visits]);
    await this.#recorder.flush();
  }

  /** Cluster mode: the shards polled here, with their epochs and targets. */
  activeShards(): Array<{ shard: string; epoch: number; targets: number }> {
    const targets = new Map<string, number>();
    for (const state of this.#states.values()) if (state.shard) targets.set(state.shard, (targets.get(state.shard) ?? 0) + 1);
    return [...this.#active].map(([shard, active]) => ({ shard, epoch: active.epoch, targets: targets.get(shard) ?? 0 }));
  }

  setMaintenance(nodeId: string, until: number): void {
    if (this.options.cluster) this.#knownMaintenance.set(nodeId, until);
    const state = this.#states.get(nodeId);
    if (state) state.maintenanceUntil = until;
  }

  /** An operator cleared the lockout latch: logins may be tried again at the next visit. */
  clearLatch(nodeId: string): void {
    this.#latches.known.delete(nodeId);
    const state = this.#states.get(nodeId);
    if (!state) return;
    state.latch = null;
    this.#latches.unrecorded.delete(nodeId); // cleared before it was stored: storing it now would re-latch at replay
    state.due.liveness = Math.min(state.due.liveness, this.#clock());
    this.#enqueue(state);
  }

  isLatched(nodeId: string): boolean {
    return this.#states.get(nodeId)?.latch != null;
  }

  #enqueue(state: TargetState): void {
    this.#queues.enqueue(state);
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#lastRefill = this.#clock();
    this.#timer = this.#timers.setInterval(() => this.#dispatch(), 20);
    this.#flushTimer = this.#timers.setInterval(() => void Promise.all([this.#recorder.flush(), this.#latches.record(), this.#transports.record()]), this.#policy.flushIntervalMs);
  }

  /**
   * Stops dispatching, waits up to `graceMs` for visits in flight (a firmware read can take minutes; its
   * sessions are logged out by the driver whenever it ends), and flushes the outcomes recorded so far.
   */
  async stop(graceMs = 5000): Promise<void> {
    this.#running = false;
    if (this.#timer) this.#timers.clearInterval(this.#timer);
    if (this.#flushTimer) this.#timers.clearInterval(this.#flushTimer);
    let timer: TimerHandle | undefined;
    await Promise.race([Promise.all([...this.#pending]), new Promise((resolve) => (timer = this.#timers.setTimeout(() => resolve(undefined), graceMs)))]);
    this.#timers.clearTimeout(timer);
    await Promise.all([this.#recorder.flush(), this.#latches.record(), this.#transports.record(), this.#push?.keeper.close()]);
    await this.#transports.close();
  }

  flush(): Promise<void> {
    return this.#recorder.flush();
  }

  #dispatch(): void {
    if (!this.#running) return;
    const now = this.#clock();
    this.#tokens = Math.min(this.#policy.maxVisitsPerSecond, this.#tokens + ((now - this.#lastRefill) / 1000) * this.#policy.maxVisitsPerSecond);
    this.#lastRefill = now;
    while (this.#inFlight < this.#policy.maxConcurrentVisits && this.#tokens >= 1) {
      const state = this.#queues.takeCheck(now);
      if (!state) break;
      this.#tokens -= 1;
      this.#track(this.#check(state, now), state);
    }
    while (this.#heavyInFlight < this.#policy.maxConcurrentReads && this.#tokens >= 1) {
      const state = this.#queues.takeRead(now);
      if (!state) break;
      this.#tokens -= 1;
      this.#track(this.#read(state, now), state);
    }
  }

  #track(visit: Promise<void>, state: TargetState): void {
    const guarded = visit.catch((error: unknown) => this.options.log?.('visit failed unexpectedly', { nodeId: state.target.nodeId, error: String(error) }));
    this.#pending.add(guarded);
    const shardVisits = state.shard !== undefined ? this.#active.get(state.shard)?.visits : undefined;
    shardVisits?.add(guarded);
    void guarded.finally(() => {
      this.#pending.delete(guarded);
      shardVisits?.delete(guarded);
    });
  }

  /**
   * After a visit cut by the lease: where the shard is still polled here under the same epoch (the guard refused while
   * a late renewal was on its way, and the renewal kept the lease), the target is queued again, so its work is tried
   * once the lease allows (`#take` holds it back until then). Otherwise its shard's new owner polls it, or this process
   * under the new epoch, with a state of its own. Left out of the queue, the target would never be polled again here.
   */
  #requeueAfterCut(state: TargetState): void {
    if (this.#states.get(state.target.nodeId) !== state || state.shard === undefined) return;
    if (this.#active.get(state.shard)?.epoch !== state.epoch) return;
    this.#enqueue(state);
  }

  /** Heavy work due now, in one session, on a BMC that answers. Failures here do not count as misses. */
  async #read(state: TargetState, now: number): Promise<void> {
    const { target } = state;
    const credential = this.#credentialOf(state);
    if (!credential || credential === 'fenced' || this.#transports.latched(target)) return;
    const works = pollWorks.filter((w): w is Exclude<PollWork, 'liveness'> => w !== 'liveness' && state.due[w] <= now);
    if (works.length === 0) return;
    state.reading = true;
    this.#heavyInFlight += 1;
    this.#visits += 1;
    try {
      const sessionLimit = targetSessionLimit(this.#policy, target);
      // Inventory and firmware change only with the hardware or its firmware: asked with If-None-Match first.
      const conditional = conditionalWorks(works);
      const validators = conditional ? validatorsOf(state) : undefined;
      // A firmware inventory never read gets the visit's whole deadline: a first inventory is not given up on a model
      // slower than the default (a GB200's takes up to four minutes), which would cost it a retry minutes later.
      const firmwareTimeoutMs = state.firmwareTimeoutMs ?? (state.readOnce.has('firmware') ? this.#policy.firmwareTimeoutMs : this.#policy.visitDeadlineMs);
      const visit = this.#visitor.visit(target, credential, works, { requestTimeoutMs: this.#policy.requestTimeoutMs, firmwareTimeoutMs, visitDeadlineMs: this.#policy.visitDeadlineMs, sessionLimit, ...(validators ? { validators } : {}), ...(state.readPlain || !this.#policy.expandCollections ? { expand: false } : {}), ...this.#visitGuards(state) });
      const boundMs = visitBoundMs(this.#policy, works);
      const result = await boundedVisit(this.#timers, visit, boundMs, target, works, () => this.#abandoned(target, works, boundMs));
      const done = this.#clock();
      if (!result.ok && cutByHandOver(this.options.cluster, this.#active, state, result.error)) {
        this.#requeueAfterCut(state); // its works are still due
        return;
      }
      if (!result.ok && this.#credentialMoved(state, credential)) {
        // A rotation fenced the node (or moved its version) during the read: nothing is said of the BMC, nothing latched.
        if (this.#states.get(target.nodeId) === state) this.#enqueue(state);
        return;
      }
      if (conditional && result.ok && !result.notModified) this.#validators.keep(state, result.validators, result.changedResource);
      const outcome: PollOutcomeKind = result.ok ? (result.notModified ? 'not-modified' : 'success') : outcomeOfError(result.error);
      for (const work of works) this.#record(target, work, outcome, result.latencyMs, done, leaseOf(state));
      if (!this.#states.has(target.nodeId)) return;
      if (result.ok && state.readOnce.size === 0) this.#queues.firstReads.noteRead(state.model ?? '', result.latencyMs);
      state.heavyFailures = result.ok ? 0 : state.heavyFailures + 1;
      // A firmware inventory slower than the deadline would time out at every try: this BMC's deadline doubles, up to
      // the visit's own.
      if (outcome === 'timeout' && works.includes('firmware') && state.readOnce.has('firmware')) state.firmwareTimeoutMs = Math.min(this.#policy.visitDeadlineMs, firmwareTimeoutMs * 2);
      // A BMC that announces `$expand` but cannot build an expanded answer in time would fail every read the same way:
      // from now on it is read member by member, each request small. Only a timeout of an expanded request itself
      // counts, and once; the operator is told.
      if (outcome === 'timeout' && !state.readPlain && expandedRequestTimedOut(result.error)) {
        state.readPlain = true;
        this.options.log?.('an expanded read timed out: this BMC is read member by member from now on', { nodeId: target.nodeId, works: works.join(',') });
      }
      for (const work of works) {
        if (result.ok) state.readOnce.add(work);
        // A work read once waits a full interval, success or not: a struggling BMC is not read harder. A work never
        // read is tried again after `firstReadRetryS`, doubled at each failure, up to its interval: a fleet brought up
        // is inventoried within minutes, not at the next four-hourly read of the nodes whose first read failed.
        const interval = this.#policy.intervals[work] * 1000;
        const wait = result.ok || state.readOnce.has(work) ? interval : Math.min(interval, this.#policy.firstReadRetryS * 1000 * 2 ** Math.min(state.heavyFailures - 1, 20));
        state.due[work] = done + wait * (1 + this.#random() * this.#policy.jitter);
      }
      if (result.ok) {
        state.lastContactAt = done;
        // Observations not stored are read again next visit: no validators then, or a 304 would hide them for good.
        if (result.observations.length > 0 && !(await this.#observations.append(state, result.observations, done))) delete state.readValidators;
      } else if (latchesCredentials(result.error)) {
        await this.#latches.latch(state, credential, result.error, done);
      } else if (isDriverError(result.error)) {
        this.#transports.refused(target, result.error);
      }
      this.#enqueue(state);
    } finally {
      state.reading = false;
      this.#heavyInFlight -= 1;
    }
  }

  /** The liveness check: one light authenticated request. Its outcome is what absence is measured by. */
  async #check(state: TargetState, now: number): Promise<void> {
    const { target } = state;
    const interval = target.expectedIntervalS * 1000;
    // Jitter only ever brings a check forward, so the gap between two checks never exceeds the interval.
    const jitter = (): number => -this.#random() * this.#policy.jitter * interval;
    if (now < state.maintenanceUntil) {
      state.due.liveness = now + interval + jitter();
      this.#enqueue(state);
      return;
    }
    const selected = this.#credentialOf(state);
    if (selected === 'fenced') {
      await fencedCheck(this.#fencedHost, state, now);
      return;
    }
    const credential = selected;
    if (!credential && state.credential?.version !== undefined && (state.credentialWaits ?? 0) < 5) {
      // A version just put in force that this thread has not been handed yet: asked for, here within seconds.
      state.credentialWaits = (state.credentialWaits ?? 0) + 1;
      state.due.liveness = now + 2_000;
      this.#enqueue(state);
      return;
    }
    if (state.latch && credential && credentialFingerprint(target.credentialRef, credential.version) !== state.latch.fingerprint) {
      state.latch = null; // the credential changed: logins may be tried again
    }
    if (state.latch || !credential || this.#transports.latched(target)) {
      // No login with a latched (or missing) credential, nor to a BMC whose certificate changed; the outcome is
      // recorded so the gap is explained.
      this.#record(target, 'liveness', 'latched', 0, now, leaseOf(state));
      state.due.liveness = now + interval + jitter();
      this.#enqueue(state);
      return;
    }
    const works: PollWork[] = ['liveness'];
    state.checking = true;
    this.#inFlight += 1;
    this.#visits += 1;
    try {
      if (this.#push && (await pushCheck(this.#push, state, credential, now))) return;
      const sessionLimit = targetSessionLimit(this.#policy, target);
      // Until it is known what kind of BMC this is, the check also asks (its service root): it orders the first read.
      const describe = state.model === undefined && state.readOnce.size === 0;
      const visitOptions = { requestTimeoutMs: this.#policy.requestTimeoutMs, firmwareTimeoutMs: this.#policy.firmwareTimeoutMs, visitDeadlineMs: this.#policy.visitDeadlineMs, sessionLimit, ...(state.livenessEtag ? { ifNoneMatch: state.livenessEtag } : {}), ...(describe ? { describe } : {}), ...this.#visitGuards(state) };
      const attempts = async (): Promise<VisitResult> => {
        let result = await this.#visitor.visit(target, credential, works, visitOptions);
        for (let attempt = 1; !result.ok && attempt <= this.#policy.maxRetries && retryWithinVisit(result.error) && !cutByHandOver(this.options.cluster, this.#active, state, result.error); attempt += 1) {
          await delay(this.#timers, this.#policy.retryBaseMs * 2 ** (attempt - 1) * (0.5 + this.#random()));
          result = await this.#visitor.visit(target, credential, works, visitOptions);
        }
        return result;
      };
      const boundMs = visitBoundMs(this.#policy, works);
      const result = await boundedVisit(this.#timers, attempts(), boundMs, target, works, () => this.#abandoned(target, works, boundMs));
      const done = this.#clock();
      if (!result.ok && cutByHandOver(this.options.cluster, this.#active, state, result.error)) {
        state.due.liveness = Math.min(state.due.liveness, done);
        this.#requeueAfterCut(state);
        return;
      }
      if (!result.ok && this.#credentialMoved(state, credential)) {
        // Fenced by a rotation (or its version moved) while the check was out: checked again at once, nothing latched.
        state.due.liveness = Math.min(state.due.liveness, done);
        if (this.#states.get(target.nodeId) === state) this.#enqueue(state);
        return;
      }
      if (result.ok) state.credentialWaits = 0;
      const outcome: PollOutcomeKind = result.ok ? (result.notModified ? 'not-modified' : 'success') : outcomeOfError(result.error);
      if (result.ok && result.etag) state.livenessEtag = result.etag;
      if (result.ok && describe) state.model = result.model ?? '';
      this.#record(target, 'liveness', outcome, result.latencyMs, done, leaseOf(state));
      if (!this.#states.has(target.nodeId)) return; // decommissioned meanwhile
      if (result.ok) {
        state.neverContacted = false;
        state.lastContactAt = done;
        state.consecutiveFailures = 0;
        state.sessionLimitStreak = 0;
        // Due from the start of this check, less the time this BMC took to answer, so the next answer (the
        // contact) comes within one interval of this one even when answers are slow.
        const answerMs = Math.min(done - now, interval / 4);
        state.due.liveness = Math.max(done, now + interval - answerMs + jitter());
      } else {
        state.consecutiveFailures += 1;
        state.sessionLimitStreak = outcome === 'session-limit' ? state.sessionLimitStreak + 1 : 0;
        if (latchesCredentials(result.error)) await this.#latches.latch(state, credential, result.error, done);
        else if (isDriverError(result.error)) this.#transports.refused(target, result.error);
        state.due.liveness = Math.max(done, now + interval * backoffFactor(this.#policy, state) + jitter());
      }
      this.#enqueue(state);
    } finally {
      state.checking = false;
      this.#inFlight -= 1;
    }
  }

  /** A visit's guards: its shard's lease (cluster mode), and the node's rotation fence, asked before every request. */
  #visitGuards(state: TargetState): { guard: () => boolean; signal?: AbortSignal; headers?: Record<string, string> } {
    const cluster = clusterVisitOptions(this.options.cluster, this.#active, state);
    const leased = cluster.guard;
    return { ...cluster, guard: () => !state.credential?.fenced && (leased === undefined || leased()) };
  }

  /** What the fenced check (`fenced-check.ts`) uses of the poller. */
  readonly #fencedHost: FencedCheckHost = {
    visitor: () => this.#visitor,
    policy: () => this.#policy,
    timers: () => this.#timers,
    clock: () => this.#clock(),
    random: () => this.#random(),
    visitOptions: (state) => clusterVisitOptions(this.options.cluster, this.#active, state),
    cutByHandOver: (state, error) => cutByHandOver(this.options.cluster, this.#active, state, error),
    latched: (target) => this.#transports.latched(target),
    record: (target, outcome, latencyMs, at, lease) => this.#record(target, 'liveness', outcome, latencyMs, at, lease),
    enqueue: (state) => this.#enqueue(state),
    requeueAfterCut: (state) => this.#requeueAfterCut(state),
    abandoned: (target, boundMs) => this.#abandoned(target, ['liveness'], boundMs),
    polled: (nodeId) => this.#states.has(nodeId),
    started: () => {
      this.#inFlight += 1;
      this.#visits += 1;
      this.#fencedChecks += 1;
    },
    ended: () => {
      this.#inFlight -= 1;
    },
  };

  /** A visit still unsettled at its bound (`boundedVisit`): counted and logged; it is recorded as a timeout. */
  #abandoned(target: PollTarget, works: readonly PollWork[], boundMs: number): void {
    this.#visitsAbandoned += 1;
    this.options.log?.('a visit did not end within its bound: recorded as a timeout, the BMC is polled again on schedule', { nodeId: target.nodeId, works: works.join(','), boundMs });
  }

  #record(target: PollTarget, work: PollWork, outcome: PollOutcomeKind, latencyMs: number, at: number, lease?: { shard: string; epoch: number }): void {
    this.#recorder.record(target.site, target.nodeId, work, outcome, latencyMs, at, lease);
    this.options.onOutcome?.(target.nodeId, work, outcome, latencyMs, at);
  }

  stats(): PollerStats {
    const perTarget = targetStats(this.#states.values(), this.#clock(), this.#policy.breakerThreshold);
    return {
      targets: this.#states.size,
      visits: this.#visits,
      visitsInFlight: this.#inFlight + this.#heavyInFlight,
      latched: perTarget.latched,
      circuitOpen: perTarget.circuitOpen,
      outcomes: { ...this.#recorder.counts },
      observationsAppended: this.#observations.appended,
      outcomeBytesAppended: this.#recorder.bytesAppended,
      pendingOutcomes: this.#recorder.pendingOutcomes,
      outcomesDropped: this.#recorder.outcomesDropped,
      appendsFenced: this.#recorder.outcomesFenced + this.#observations.fenced,
      visitsAbandoned: this.#visitsAbandoned,
      unrecordedLatches: this.#latches.unrecorded.size,
      sinceContactMaxMs: perTarget.sinceContactMaxMs,
      failureBuckets: perTarget.failureBuckets,
      sessionLimitedTargets: perTarget.sessionLimitedTargets,
      credentialRefusedTargets: [...this.#credentials.refused].filter((nodeId) => this.#states.has(nodeId)).length,
      fencedTargets: [...this.#states.values()].filter((state) => state.credential?.fenced).length,
      fencedChecks: this.#fencedChecks,
      worstTargets: perTarget.worstTargets,
      ...(this.#push ? { push: this.#push.keeper.stats() } : {}),
    };
  }

  /**
   * Keeps the target list in step with the log: registrations, decommissions, maintenance windows,
   * latches and their clearing, from `fromPosition` on. Resolves when `signal` aborts.
   */
  followIntents(signal: AbortSignal, fromPosition = 1): Promise<void> {
    return this.options.store.follow(
      { fromPosition, types: pollerIntentTypes },
      (batch) => {
        for (const event of batch.events) applyPollerIntent(event, this.#intentSink);
      },
      signal,
    );
  }
}
