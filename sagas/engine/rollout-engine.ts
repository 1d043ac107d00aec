/**
 * The rollout engine: the only code that turns the deciders' choices into appends and BMC requests.
 *
 * One engine owns a rollout at a time, in any number of processes (its lease, a PostgreSQL advisory lock held for the
 * whole run: see `saga-ownership.ts`; a second engine stands by, holding no connection, and takes over within a tick
 * of the owner's death). An engine whose lease is lost stops and appends nothing more. Capacity is shared with every
 * other saga of the site through the capacity stream, appended with the version the engine read, so even two engines
 * on one site can never both take the last slot.
 *
 * Crash safety (kill -9 at any instant) comes from the order of writes, each acknowledged only after commit:
 * - dispatch: `SlotAcquired` (capacity, expected version) → `NodeDispatched` → `StepStarted`; a restart finds the
 *   slot and records what is missing (deterministic event ids make repeats no-ops);
 * - update: `UpdateIntentRecorded` → the request → `UpdateSubmitted`; a restart finds the intent without a
 *   submission and probes the BMC instead of sending again;
 * - completion: the step's terminal event → `NodeOutcomeRecorded` → `SlotReleased`.
 */
import type { ProposedEvent } from '../../events/index.js';
import type { EventStore } from '../../src/ledger/index.js';
import { capacityStream, evolveCapacity, initialCapacity, type CapacityState } from '../capacity/capacity-evolve.js';
import { decideRollout, type RolloutCommand } from '../firmware-rollout/rollout-decide.js';
import { evolveRollout, initialRollout, rolloutStream, type RolloutState } from '../firmware-rollout/rollout-evolve.js';
import { defaultRequestTimeoutMs, defaultStepTiming, stepTimingOf, type StepTiming } from '../firmware-rollout/step-decide.js';
import { evolveStep, initialStep, stepStream, terminalPhases, type StepState } from '../firmware-rollout/step-evolve.js';
import type { SagaEvent } from '../saga-event.js';
import { readGateInputs } from './gate.js';
import { nameUuid, pause } from '../../src/ledger/index.js';
import { driveFirmwareStep, type BmcAccess } from './step-driver.js';
import type { SagaOwnership, SagaLease } from './saga-ownership.js';
import { runWithSagaLease } from './saga-lease-shell.js';

export type { BmcAccess } from './step-driver.js';


export interface RolloutEngineOptions {
  store: EventStore;
  rolloutId: string;
  /** How to reach a node's BMC (credentials come from the operator's secret store, never from the log). */
  access: (nodeId: string) => BmcAccess | undefined;
  /** Overrides the rollout's recorded step timing (its policy); for tests and benches. */
  timing?: Partial<StepTiming>;
  /** Between two rollout decisions. Default 1 s. */
  tickMs?: number;
  gateRetryMs?: number;
  maxInconclusive?: number;
  now?: () => number;
  requestTimeoutMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** Return once the rollout is halted or paused and nothing is in flight (a batch run), instead of waiting for an operator. */
  exitWhenStopped?: boolean;
  /** Called after every rollout decision (metrics, progress bars). */
  onProgress?: (state: RolloutState, inFlight: number) => void;
  /** The process's saga locks (a supervisor shares one among its engines); by default the engine opens its own. */
  ownership?: SagaOwnership;
  /** How often an engine standing by tries to take the rollout over. Default: one tick. */
  leaseRetryMs?: number;
}

/** The advisory lock key of a rollout (its owner holds it in `pg_locks`, as `hashtext` of this). */
export function rolloutLockKey(rolloutId: string): string {
  return `fleet-ledger:rollout:${rolloutId}`;
}



function toSagaEvent(event: { type: string; data: unknown; actor: SagaEvent['actor']; recordedAt: Date }): SagaEvent {
  return { type: event.type, data: event.data, actor: event.actor, recordedAt: event.recordedAt.getTime() };
}

export class RolloutEngine {
  private state: RolloutState;
  private readonly capacity = new Map<string, CapacityState>();
  private readonly steps = new Map<string, StepState>();
  private readonly workers = new Map<string, Promise<void>>();
  private timing: StepTiming;
  private readonly now: () => number;
  private stopping = false;
  private lease: SagaLease | undefined;
  private leaseLost = false;

  constructor(private readonly options: RolloutEngineOptions) {
    this.state = initialRollout(options.rolloutId);
    this.timing = { ...defaultStepTiming, ...options.timing };
    this.now = options.now ?? Date.now;
  }

  get rollout(): RolloutState {
    return this.state;
  }

  /** True when the run ended because the rollout's lease was lost (another process may drive it now). */
  get lostLease(): boolean {
    return this.leaseLost;
  }

  /**
   * Runs until the rollout is completed or aborted and no step is left to drive, or `signal` aborts, or the lease is
   * lost. Stands by first while another process drives the rollout.
   */
  async run(signal?: AbortSignal): Promise<RolloutState> {
    const { store, rolloutId } = this.options;
    return runWithSagaLease(
      {
        lockKey: rolloutLockKey(rolloutId),
        connectionString: store.connectionString,
        ownership: this.options.ownership,
        retryMs: this.options.leaseRetryMs ?? this.options.tickMs ?? 1_000,
        signal,
        stopping: () => this.stopping,
        onLost: () => {
          this.leaseLost = true;
          this.stopping = true;
          this.options.log?.('rollout lease lost: this engine stops and appends nothing more', { rolloutId });
        },
        standingBy: () => this.state,
        log: this.options.log,
      },
      async (lease) => {
        this.lease = lease;
        await this.load();
        while (!signal?.aborted && !this.stopping) {
          await this.tick();
          const live = [...this.steps.values()].some((step) => !terminalPhases.has(step.phase) && step.phase !== 'held');
          const ended = this.state.status === 'completed' || this.state.status === 'aborted';
          const stopped = this.options.exitWhenStopped === true && (this.state.status === 'halted' || this.state.status === 'paused');
          if ((ended || stopped) && !live && this.workers.size === 0) break;
          await pause(this.options.tickMs ?? 1_000, signal);
        }
        this.stopping = true;
        await Promise.allSettled([...this.workers.values()]);
        return this.state;
      },
    );
  }

  /** Appends only while this engine holds the rollout: one that lost its lease must not write beside the next owner. */
  private owned(): void {
    if (this.lease?.lost.aborted !== false) throw new Error(`rollout ${this.options.rolloutId} is not held by this engine (lease lost)`);
  }

  stop(): void {
    this.stopping = true;
  }

  private async load(): Promise<void> {
    const { store, rolloutId } = this.options;
    this.state = initialRollout(rolloutId);
    for (const event of await store.readStreamToEnd(rolloutStream(rolloutId))) evolveRollout(this.state, toSagaEvent(event));
    if (!this.state.plan) throw new Error(`no rollout ${rolloutId} (stream ${rolloutStream(rolloutId)} holds no RolloutPlanned)`);
    // The step's pace is the rollout's policy (recorded in its plan); an engine's own timing overrides it (tests).
    this.timing = stepTimingOf(this.state.plan.stepTiming, this.options.timing);
    for (const site of new Set(this.state.plan.targets.map((target) => target.site))) await this.refreshCapacity(site);
    // Steps in flight: dispatched (or holding a slot) without a recorded outcome.
    const inFlight = new Set<string>();
    for (const nodeId of this.state.dispatched.keys()) if (!this.state.outcomes.has(nodeId)) inFlight.add(nodeId);
    for (const capacity of this.capacity.values()) {
      for (const slot of capacity.slots.values()) if (slot.sagaId === rolloutId && !this.state.outcomes.has(slot.nodeId)) inFlight.add(slot.nodeId);
    }
    await Promise.all([...inFlight].map((nodeId) => this.loadStep(nodeId)));
  }

  private async loadStep(nodeId: string): Promise<void> {
    let state = initialStep();
    for (const event of await this.options.store.readStreamToEnd(stepStream(this.options.rolloutId, nodeId))) state = evolveStep(state, toSagaEvent(event));
    this.steps.set(nodeId, state);
  }

  private async refreshCapacity(site: string): Promise<CapacityState> {
    const state = this.capacity.get(site) ?? initialCapacity(site);
    const events = await this.options.store.readStreamToEnd(capacityStream(site), state.version + 1);
    for (const event of events) evolveCapacity(state, toSagaEvent(event));
    this.capacity.set(site, state);
    return state;
  }

  private async appendRollout(events: ProposedEvent[]): Promise<void> {
    const stream = rolloutStream(this.options.rolloutId);
    this.owned();
    await this.options.store.append(stream, events, { expectedVersion: this.state.version });
    // Read back what was written (recorded times come from the ledger's clock).
    for (const event of await this.options.store.readStreamToEnd(stream, this.state.version + 1)) evolveRollout(this.state, toSagaEvent(event));
  }

  private async tick(): Promise<void> {
    const { rolloutId } = this.options;
    const stepView = new Map<string, StepState>();
    for (const [nodeId, step] of this.steps) if (!this.state.outcomes.has(nodeId) || terminalPhases.has(step.phase)) stepView.set(nodeId, step);
    let commands: RolloutCommand[];
    try {
      // Operators write to the rollout (approve, pause, abort, node verbs) and to held steps (retry, release): read
      // what they appended since the last tick.
      const stream = rolloutStream(rolloutId);
      for (const event of await this.options.store.readStreamToEnd(stream, this.state.version + 1)) evolveRollout(this.state, toSagaEvent(event));
      for (const [nodeId, step] of this.steps) {
        if (step.phase !== 'held' && !(terminalPhases.has(step.phase) && step.outcome === 'quarantined' && !step.released)) continue;
        let next = step;
        for (const event of await this.options.store.readStreamToEnd(stepStream(rolloutId, nodeId), step.version + 1)) next = evolveStep(next, toSagaEvent(event));
        this.steps.set(nodeId, next);
      }
      for (const site of this.capacity.keys()) await this.refreshCapacity(site);
      commands = decideRollout(this.state, {
        now: this.now(),
        capacity: this.capacity,
        steps: stepView,
        gateRetryMs: this.options.gateRetryMs ?? 10_000,
        maxInconclusive: this.options.maxInconclusive ?? 30,
      });
      await this.execute(commands);
    } catch (error) {
      if ((error as { code?: string }).code === 'LEDGER_STALE_EPOCH') {
        // Another process took the rollout over before this one heard that its lock session ended.
        this.leaseLost = true;
        this.stopping = true;
        this.options.log?.('rollout taken over by another process (stale epoch): this engine stops', { rolloutId });
        return;
      }
      // A lost race on a stream (another saga took the slot first) or a database hiccup: read again next tick.
      this.options.log?.('rollout tick failed; retrying', { rolloutId, error: String(error) });
      const stream = rolloutStream(rolloutId);
      for (const event of await this.options.store.readStreamToEnd(stream, this.state.version + 1).catch(() => [])) evolveRollout(this.state, toSagaEvent(event));
    }
    // Drive every step that is in flight and has no worker.
    for (const [nodeId, step] of this.steps) {
      if (this.workers.has(nodeId) || terminalPhases.has(step.phase) || step.phase === 'held' || this.stopping) continue;
      const worker = driveFirmwareStep({
        store: this.options.store,
        rolloutId,
        nodeId,
        plan: this.state.plan!,
        slotId: this.state.dispatched.get(nodeId)?.slotId ?? `${rolloutId}:${nodeId}`,
        timing: this.timing,
        access: this.options.access(nodeId),
        now: this.now,
        stopping: () => this.stopping,
        owned: () => this.lease?.lost.aborted === false,
        lease: this.lease!.stamp,
        get: () => this.steps.get(nodeId),
        set: (step) => this.steps.set(nodeId, step),
        requestTimeoutMs: this.options.requestTimeoutMs ?? this.state.plan!.stepTiming?.requestTimeoutMs ?? defaultRequestTimeoutMs,
        ...(this.options.log ? { log: this.options.log } : {}),
      }).catch((error: unknown) => this.options.log?.('step worker stopped', { rolloutId, nodeId, error: String(error) })).finally(() => this.workers.delete(nodeId));
      this.workers.set(nodeId, worker);
    }
    this.options.onProgress?.(this.state, [...this.steps.values()].filter((step) => !terminalPhases.has(step.phase)).length);
  }

  private async execute(commands: RolloutCommand[]): Promise<void> {
    const { store, rolloutId } = this.options;
    const actor = { kind: 'saga' as const, id: `rollout:${rolloutId}`, lease: this.lease!.stamp };
    const rolloutEvents: ProposedEvent[] = [];
    // Our own appends to a capacity stream in this tick: a decision made before them still expects its version plus
    // these (releases only free slots, so the decision stays within the caps); anyone else's append is a conflict.
    const ownAppends = new Map<string, number>();
    const flush = async (): Promise<void> => {
      if (rolloutEvents.length === 0) return;
      await this.appendRollout(rolloutEvents.splice(0));
    };
    for (const command of commands) {
      switch (command.kind) {
        case 'start':
          rolloutEvents.push({ type: 'RolloutStarted', data: { rolloutId }, actor, eventId: nameUuid(`${rolloutId}:started`) });
          break;
        case 'record-dispatch':
          rolloutEvents.push({ type: 'NodeDispatched', data: { rolloutId, nodeId: command.nodeId, wave: command.wave, slotId: command.slotId }, actor, eventId: nameUuid(`${rolloutId}:dispatched:${command.nodeId}`) });
          if (!this.steps.has(command.nodeId)) await this.loadStep(command.nodeId);
          break;
        case 'record-outcome':
          rolloutEvents.push({ type: 'NodeOutcomeRecorded', data: { rolloutId, nodeId: command.nodeId, wave: command.wave, outcome: command.outcome, detail: command.detail.slice(0, 2000) }, actor, eventId: nameUuid(`${rolloutId}:outcome:${command.nodeId}`) });
          break;
        case 'release-slot': {
          await flush(); // the outcome is recorded before the slot goes back
          const capacity = this.capacity.get(command.site)!;
          const { slot } = command;
          this.owned();
          await store.append(
            capacityStream(command.site),
            [{ type: 'SlotReleased', data: { site: command.site, slotId: slot.slotId, sagaId: slot.sagaId, nodeId: slot.nodeId, why: command.why }, actor, eventId: nameUuid(`${slot.slotId}:released`) }],
            { expectedVersion: capacity.version },
          );
          ownAppends.set(command.site, (ownAppends.get(command.site) ?? 0) + 1);
          await this.refreshCapacity(command.site);
          this.steps.delete(slot.nodeId);
          break;
        }
        case 'acquire-slots': {
          await flush();
          const expected = command.expectedVersion + (ownAppends.get(command.site) ?? 0);
          this.owned();
          await store.append(
            capacityStream(command.site),
            command.slots.map((slot) => ({ type: 'SlotAcquired', data: slot, actor, eventId: nameUuid(`${slot.slotId}:acquired`) })),
            { expectedVersion: expected === 0 ? 'no_stream' : expected },
          );
          await this.refreshCapacity(command.site);
          for (const slot of command.slots) {
            rolloutEvents.push({ type: 'NodeDispatched', data: { rolloutId, nodeId: slot.nodeId, wave: this.state.targets.get(slot.nodeId)!.wave, slotId: slot.slotId }, actor, eventId: nameUuid(`${rolloutId}:dispatched:${slot.nodeId}`) });
            this.steps.set(slot.nodeId, initialStep());
          }
          break;
        }
        case 'open-wave':
          rolloutEvents.push({ type: 'WaveOpened', data: { rolloutId, wave: command.wave, nodes: command.nodes }, actor, eventId: nameUuid(`${rolloutId}:wave-opened:${command.wave}`) });
          break;
        case 'evaluate-gate': {
          await flush();
          const plan = this.state.plan!;
          const updated = (this.state.waveMembers[command.wave] ?? []).filter((nodeId) => {
            const outcome = this.state.outcomes.get(nodeId)?.outcome;
            return outcome === 'updated' || outcome === 'already-at-target';
          });
          const record = await readGateInputs(store.db as never, updated, plan.gate, this.now());
          rolloutEvents.push({ type: 'GateEvaluated', data: { rolloutId, wave: command.wave, ...record }, actor });
          break;
        }
        case 'advance-wave':
          rolloutEvents.push({ type: 'WaveAdvanced', data: { rolloutId, from: command.from, to: command.to, by: 'gate' }, actor, eventId: nameUuid(`${rolloutId}:advanced:${command.from}`) });
          break;
        case 'halt':
          rolloutEvents.push({ type: 'RolloutHalted', data: { rolloutId, reason: command.reason, detail: command.detail }, actor });
          this.options.log?.('rollout halted', { rolloutId, reason: command.reason, detail: command.detail });
          break;
        case 'pause':
          rolloutEvents.push({ type: 'RolloutPaused', data: { rolloutId, reason: command.reason, detail: command.detail }, actor });
          break;
        case 'complete':
          rolloutEvents.push({
            type: 'RolloutCompleted',
            data: { rolloutId, updated: command.counts.updated, alreadyAtTarget: command.counts['already-at-target'], failed: command.counts.failed, quarantined: command.counts.quarantined, skipped: command.counts.skipped },
            actor,
            eventId: nameUuid(`${rolloutId}:completed`),
          });
          break;
      }
    }
    await flush();
  }
}

