/**
 * The credential rotation engine: the only code that turns the rotation's decisions into store writes, appends and
 * BMC work. It runs under the rotation's lease (one process at a time, `runWithSagaLease`), shares each site's
 * capacity stream with every other saga, and is safe to kill -9 at any instant because of the order of its writes,
 * each acknowledged only after it is durable:
 * - staging: the store writes and syncs the new version → `CredentialVersionStaged` (a restart stages again under the
 *   same version id and gets the same secret back);
 * - dispatch: `SlotAcquired` (capacity, expected version) → `CredentialRotationNodeDispatched` → `CredentialStepStarted`
 *   (the fence) → ... the step's own order (`credential-step-driver.ts`);
 * - completion: the step's last event → `CredentialRotationNodeSettled` → `SlotReleased`;
 * - retirement: the store's one operation → `CredentialVersionsRetired` (a restart retires again: the same result).
 */
import { sql } from 'kysely';
import type { ProposedEvent } from '../../events/index.js';
import { generateBmcPassword, type VersionedCredentialStore } from '../../src/credentials/index.js';
import type { EventStore } from '../../src/ledger/index.js';
import { nameUuid, pause } from '../../src/ledger/index.js';
import { capacityStream, evolveCapacity, initialCapacity, type CapacityState } from '../capacity/capacity-evolve.js';
import type { CredentialStepContext } from '../credential-rotation/credential-step-decide.js';
import { initialCredentialStep, type CredentialStepState } from '../credential-rotation/credential-step-evolve.js';
import { decideRotation, outcomeOfStep, type RotationCommand } from '../credential-rotation/rotation-decide.js';
import { evolveRotation, initialRotation, rotationStream, type RotationState } from '../credential-rotation/rotation-evolve.js';
import type { RotationTarget } from '../credential-rotation/rotation-planner.js';
import type { SagaEvent } from '../saga-event.js';
import { driveCredentialStep, loadCredentialStep } from './credential-step-driver.js';
import type { SagaLease, SagaOwnership } from './saga-ownership.js';
import { runWithSagaLease } from './saga-lease-shell.js';

export interface RotationEngineOptions {
  store: EventStore;
  rotationId: string;
  /** Where the versions are staged and read (a secret manager, or the file store). */
  credentials: VersionedCredentialStore;
  /** Sites whose BMCs may be reached over plain http (the simulator). */
  plainHttpSites?: readonly string[];
  /** The new secret of a reference (default: 16 characters most BMC policies take). */
  generatePassword?: (credentialRef: string) => string;
  /** Between two rotation decisions. Default 1 s. */
  tickMs?: number;
  requestTimeoutMs?: number;
  retryBackoffMs?: number;
  unreachableRetryMs?: number;
  /** References staged per decision, at most (default 2,000: one store write and one append each). */
  stageBatch?: number;
  now?: () => number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** Return once the rotation is halted or paused and nothing is in flight, instead of waiting for an operator. */
  exitWhenStopped?: boolean;
  onProgress?: (state: RotationState, inFlight: number) => void;
  ownership?: SagaOwnership;
  leaseRetryMs?: number;
}

export function rotationLockKey(rotationId: string): string {
  return `fleet-ledger:rotation:${rotationId}`;
}

function toSagaEvent(event: { type: string; data: unknown; actor: SagaEvent['actor']; recordedAt: Date }): SagaEvent {
  return { type: event.type, data: event.data, actor: event.actor, recordedAt: event.recordedAt.getTime() };
}

export class RotationEngine {
  private state: RotationState;
  private readonly capacity = new Map<string, CapacityState>();
  private readonly steps = new Map<string, CredentialStepState>();
  private readonly workers = new Map<string, Promise<void>>();
  private readonly now: () => number;
  private stopping = false;
  private lease: SagaLease | undefined;
  private leaseLost = false;
  /** Rotated BMCs of each wave the poller latched after their change, and when that was counted. */
  private readonly latched = new Map<number, { count: number; at: number }>();
  private startPosition: number | undefined;

  constructor(private readonly options: RotationEngineOptions) {
    this.state = initialRotation(options.rotationId);
    this.now = options.now ?? Date.now;
  }

  get rotation(): RotationState {
    return this.state;
  }

  get lostLease(): boolean {
    return this.leaseLost;
  }

  stop(): void {
    this.stopping = true;
  }

  async run(signal?: AbortSignal): Promise<RotationState> {
    const { store, rotationId } = this.options;
    return runWithSagaLease(
      {
        lockKey: rotationLockKey(rotationId),
        connectionString: store.connectionString,
        ownership: this.options.ownership,
        retryMs: this.options.leaseRetryMs ?? this.options.tickMs ?? 1_000,
        signal,
        stopping: () => this.stopping,
        onLost: () => {
          this.leaseLost = true;
          this.stopping = true;
          this.options.log?.('rotation lease lost: this engine stops and appends nothing more', { rotationId });
        },
        standingBy: () => this.state,
        log: this.options.log,
      },
      async (lease) => {
        this.lease = lease;
        await this.load();
        while (!signal?.aborted && !this.stopping) {
          await this.tick();
          const live = [...this.steps.values()].some((step) => step.phase === 'new' || step.phase === 'active');
          const ended = (this.state.status === 'completed' && (this.state.retired || !this.state.plan?.retireOld)) || this.state.status === 'aborted';
          const stopped = this.options.exitWhenStopped === true && (this.state.status === 'halted' || this.state.status === 'paused');
          if ((ended || stopped) && !live && this.workers.size === 0 && this.unsettled() === 0) break;
          await pause(this.options.tickMs ?? 1_000, signal);
        }
        this.stopping = true;
        await Promise.allSettled([...this.workers.values()]);
        return this.state;
      },
    );
  }

  /** Steps that ended but whose outcome or slot release is not recorded yet. */
  private unsettled(): number {
    let count = 0;
    for (const [nodeId, step] of this.steps) if (outcomeOfStep(step) && !this.state.outcomes.has(nodeId)) count++;
    for (const capacity of this.capacity.values()) for (const slot of capacity.slots.values()) if (slot.sagaId === this.options.rotationId && this.state.outcomes.has(slot.nodeId)) count++;
    return count;
  }

  private owned(): void {
    if (this.lease?.lost.aborted !== false) throw new Error(`rotation ${this.options.rotationId} is not held by this engine (lease lost)`);
  }

  private async load(): Promise<void> {
    const { store, rotationId } = this.options;
    this.state = initialRotation(rotationId);
    const events = await store.readStreamToEnd(rotationStream(rotationId));
    for (const event of events) evolveRotation(this.state, toSagaEvent(event));
    if (!this.state.plan) throw new Error(`no rotation ${rotationId} (stream ${rotationStream(rotationId)} holds no CredentialRotationPlanned)`);
    this.startPosition = events[0]?.position;
    for (const site of new Set(this.state.plan.targets.map((target) => target.site))) await this.refreshCapacity(site);
    const inFlight = new Set<string>();
    for (const nodeId of this.state.dispatched.keys()) if (!this.state.outcomes.has(nodeId)) inFlight.add(nodeId);
    for (const capacity of this.capacity.values()) {
      for (const slot of capacity.slots.values()) if (slot.sagaId === rotationId && !this.state.outcomes.has(slot.nodeId)) inFlight.add(slot.nodeId);
    }
    const ids = [...inFlight];
    for (let i = 0; i < ids.length; i += 64) await Promise.all(ids.slice(i, i + 64).map(async (nodeId) => this.steps.set(nodeId, await loadCredentialStep(store, rotationId, nodeId))));
  }

  private async refreshCapacity(site: string): Promise<CapacityState> {
    const state = this.capacity.get(site) ?? initialCapacity(site);
    for (const event of await this.options.store.readStreamToEnd(capacityStream(site), state.version + 1)) evolveCapacity(state, toSagaEvent(event));
    this.capacity.set(site, state);
    return state;
  }

  private async appendRotation(events: ProposedEvent[]): Promise<void> {
    const stream = rotationStream(this.options.rotationId);
    this.owned();
    await this.options.store.append(stream, events, { expectedVersion: this.state.version === 0 ? 'no_stream' : this.state.version });
    for (const event of await this.options.store.readStreamToEnd(stream, this.state.version + 1)) evolveRotation(this.state, toSagaEvent(event));
  }

  /** Rotated BMCs of `wave` whose poller latched after the rotation began (read from the log, at most every 2 s). */
  private async countLatches(wave: number): Promise<void> {
    const cached = this.latched.get(wave);
    if (cached && this.now() - cached.at < 2_000) return;
    const rotated = (this.state.waveMembers[wave] ?? []).filter((nodeId) => this.state.outcomes.get(nodeId)?.outcome === 'rotated');
    let count = 0;
    for (let i = 0; i < rotated.length; i += 5_000) {
      const chunk = rotated.slice(i, i + 5_000);
      const rows = await sql<{ n: string }>`
        SELECT count(DISTINCT data->>'nodeId') AS n FROM ledger_events
         WHERE type = 'LockoutLatched' AND position > ${this.startPosition ?? 0} AND data->>'nodeId' = ANY(${chunk}::text[])`.execute(this.options.store.db as never);
      count += Number(rows.rows[0]?.n ?? 0);
    }
    this.latched.set(wave, { count, at: this.now() });
  }

  private async tick(): Promise<void> {
    const { rotationId } = this.options;
    try {
      const stream = rotationStream(rotationId);
      for (const event of await this.options.store.readStreamToEnd(stream, this.state.version + 1)) evolveRotation(this.state, toSagaEvent(event));
      for (const site of this.capacity.keys()) await this.refreshCapacity(site);
      const plan = this.state.plan!;
      const wave = this.state.currentWave;
      const drainedAt = this.state.waveProgress[wave]?.drainedAt;
      if (this.state.status === 'running' && drainedAt !== undefined && this.now() >= drainedAt + plan.bakeMs) await this.countLatches(wave);
      const stepView = new Map<string, CredentialStepState>();
      for (const [nodeId, step] of this.steps) if (!this.state.outcomes.has(nodeId)) stepView.set(nodeId, step);
      const commands = decideRotation(this.state, {
        now: this.now(),
        capacity: this.capacity,
        steps: stepView,
        latchedAfterRotation: (w) => this.latched.get(w)?.count,
        stageBatch: this.options.stageBatch ?? 2_000,
      });
      await this.execute(commands);
    } catch (error) {
      if ((error as { code?: string }).code === 'LEDGER_STALE_EPOCH') {
        this.leaseLost = true;
        this.stopping = true;
        this.options.log?.('rotation taken over by another process (stale epoch): this engine stops', { rotationId });
        return;
      }
      this.options.log?.('rotation tick failed; retrying', { rotationId, error: String(error) });
      const stream = rotationStream(rotationId);
      for (const event of await this.options.store.readStreamToEnd(stream, this.state.version + 1).catch(() => [])) evolveRotation(this.state, toSagaEvent(event));
    }
    for (const [nodeId, step] of this.steps) {
      if (this.workers.has(nodeId) || this.stopping || (step.phase !== 'new' && step.phase !== 'active')) continue;
      const target = this.state.targets.get(nodeId);
      const staged = target ? this.state.staged.get(target.credentialRef) : undefined;
      if (!target || !staged) continue;
      const worker = driveCredentialStep({
        store: this.options.store,
        credentials: this.options.credentials,
        target,
        context: this.stepContext(target),
        staged,
        slotId: this.state.dispatched.get(nodeId)?.slotId ?? `${rotationId}:${nodeId}`,
        requestTimeoutMs: this.options.requestTimeoutMs ?? 15_000,
        startJitterMs: 1_000,
        ...(this.options.plainHttpSites ? { plainHttpSites: this.options.plainHttpSites } : {}),
        now: this.now,
        stopping: () => this.stopping,
        owned: () => this.lease?.lost.aborted === false,
        lease: this.lease!.stamp,
        get: () => this.steps.get(nodeId),
        set: (next) => this.steps.set(nodeId, next),
        ...(this.options.log ? { log: this.options.log } : {}),
      })
        .catch((error: unknown) => this.options.log?.('credential step worker stopped', { rotationId, nodeId, error: String(error) }))
        .finally(() => this.workers.delete(nodeId));
      this.workers.set(nodeId, worker);
    }
    this.options.onProgress?.(this.state, [...this.steps.entries()].filter(([nodeId]) => !this.state.outcomes.has(nodeId)).length);
  }

  private stepContext(target: RotationTarget): CredentialStepContext {
    const plan = this.state.plan!;
    const factoryRef = plan.factoryFallback?.credentialRef;
    const factory = factoryRef ? this.options.credentials.get(factoryRef) : undefined;
    return {
      rotationId: this.options.rotationId,
      nodeId: target.nodeId,
      fenceGraceMs: plan.fenceGraceMs,
      lockoutThreshold: plan.lockoutThreshold,
      retryBudget: plan.retryBudget,
      stepDeadlineMs: plan.stepDeadlineMs,
      latched: target.latched,
      ...(factoryRef && factory ? { factory: { credentialRef: factoryRef, version: factory.version } } : {}),
      retryBackoffMs: this.options.retryBackoffMs ?? 30_000,
      unreachableRetryMs: this.options.unreachableRetryMs ?? 10_000,
    };
  }

  private async execute(commands: RotationCommand[]): Promise<void> {
    const { store, rotationId } = this.options;
    const actor = { kind: 'saga' as const, id: `rotation:${rotationId}`, lease: this.lease!.stamp };
    const rotationEvents: ProposedEvent[] = [];
    const ownAppends = new Map<string, number>();
    const flush = async (): Promise<void> => {
      if (rotationEvents.length > 0) await this.appendRotation(rotationEvents.splice(0));
    };
    for (const command of commands) {
      switch (command.kind) {
        case 'start':
          rotationEvents.push({ type: 'CredentialRotationStarted', data: { rotationId }, actor, eventId: nameUuid(`${rotationId}:started`) });
          break;
        case 'stage': {
          await flush();
          // The store first, synced; the log second. A version id is the rotation's id: staging again answers the same secret.
          const generate = this.options.generatePassword ?? (() => generateBmcPassword());
          const staged = await this.options.credentials.stage(command.credentialRefs.map((credentialRef) => ({ credentialRef, version: rotationId })), generate);
          for (const item of staged) rotationEvents.push({ type: 'CredentialVersionStaged', data: { rotationId, credentialRef: item.credentialRef, version: item.version, digest: item.digest }, actor, eventId: nameUuid(`${rotationId}:staged:${item.credentialRef}`) });
          await flush();
          break;
        }
        case 'record-dispatch':
          rotationEvents.push({ type: 'CredentialRotationNodeDispatched', data: { rotationId, nodeId: command.nodeId, wave: command.wave, slotId: command.slotId }, actor, eventId: nameUuid(`${rotationId}:dispatched:${command.nodeId}`) });
          if (!this.steps.has(command.nodeId)) this.steps.set(command.nodeId, await loadCredentialStep(store, rotationId, command.nodeId));
          break;
        case 'record-settle':
          rotationEvents.push({ type: 'CredentialRotationNodeSettled', data: { rotationId, nodeId: command.nodeId, wave: command.wave, outcome: command.outcome, detail: command.detail.slice(0, 2000) }, actor, eventId: nameUuid(`${rotationId}:settled:${command.nodeId}`) });
          break;
        case 'release-slots': {
          await flush(); // the outcome is recorded before the slot goes back
          const capacity = this.capacity.get(command.site)!;
          this.owned();
          await store.append(
            capacityStream(command.site),
            command.slots.map((slot) => ({ type: 'SlotReleased', data: { site: command.site, slotId: slot.slotId, sagaId: slot.sagaId, nodeId: slot.nodeId, why: command.why }, actor, eventId: nameUuid(`${slot.slotId}:released`) })),
            { expectedVersion: capacity.version + (ownAppends.get(command.site) ?? 0) },
          );
          ownAppends.set(command.site, (ownAppends.get(command.site) ?? 0) + command.slots.length);
          for (const slot of command.slots) if (this.state.outcomes.has(slot.nodeId)) this.steps.delete(slot.nodeId);
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
          ownAppends.delete(command.site);
          for (const slot of command.slots) {
            rotationEvents.push({ type: 'CredentialRotationNodeDispatched', data: { rotationId, nodeId: slot.nodeId, wave: this.state.targets.get(slot.nodeId)!.wave, slotId: slot.slotId }, actor, eventId: nameUuid(`${rotationId}:dispatched:${slot.nodeId}`) });
            this.steps.set(slot.nodeId, initialCredentialStep());
          }
          break;
        }
        case 'open-wave':
          rotationEvents.push({ type: 'CredentialRotationWaveOpened', data: { rotationId, wave: command.wave, nodes: command.nodes }, actor, eventId: nameUuid(`${rotationId}:wave-opened:${command.wave}`) });
          break;
        case 'advance-wave':
          rotationEvents.push({ type: 'CredentialRotationWaveAdvanced', data: { rotationId, from: command.from, to: command.to, latchedAfterRotation: command.latched }, actor, eventId: nameUuid(`${rotationId}:advanced:${command.from}`) });
          break;
        case 'halt':
          rotationEvents.push({ type: 'CredentialRotationHalted', data: { rotationId, reason: command.reason, detail: command.detail }, actor });
          this.options.log?.('rotation halted', { rotationId, reason: command.reason, detail: command.detail });
          break;
        case 'complete':
          rotationEvents.push({ type: 'CredentialRotationCompleted', data: { rotationId, ...command.counts }, actor, eventId: nameUuid(`${rotationId}:completed`) });
          break;
        case 'retire':
          await flush();
          await this.retire(actor);
          break;
        default: {
          const unexpected: never = command;
          throw new Error(`unknown rotation command ${JSON.stringify(unexpected)}`);
        }
      }
    }
    await flush();
  }

  /**
   * Retires, in one operation on the store, the old versions of every reference of the rotation whose registered
   * nodes all hold the rotation's version; a reference one of whose nodes does not (held, skipped, or not a target)
   * keeps its versions and is named.
   */
  private async retire(actor: ProposedEvent['actor']): Promise<void> {
    const { store, rotationId } = this.options;
    const registrations = await sql<{ node_id: string; type: string; ref: string | null }>`
      SELECT DISTINCT ON (data->>'nodeId') data->>'nodeId' AS node_id, type, data->'bmc'->>'credentialRef' AS ref FROM ledger_events
       WHERE type IN ('NodeRegistered', 'NodeDecommissioned') ORDER BY data->>'nodeId', position DESC`.execute(store.db as never);
    const nodesOf = new Map<string, string[]>();
    for (const row of registrations.rows) {
      if (row.type !== 'NodeRegistered' || !row.ref) continue;
      const list = nodesOf.get(row.ref);
      if (list) list.push(row.node_id);
      else nodesOf.set(row.ref, [row.node_id]);
    }
    const keep: Array<{ credentialRef: string; keep: string }> = [];
    const keptBack: string[] = [];
    for (const [credentialRef, staged] of this.state.staged) {
      const nodes = nodesOf.get(credentialRef) ?? [];
      const all = nodes.length > 0 && nodes.every((nodeId) => this.state.outcomes.get(nodeId)?.outcome === 'rotated');
      if (all) keep.push({ credentialRef, keep: staged.version });
      else keptBack.push(credentialRef);
    }
    const { versionsRetired } = await this.options.credentials.retire(keep);
    this.owned();
    await this.appendRotation([
      {
        type: 'CredentialVersionsRetired',
        data: { rotationId, references: keep.length, versionsRetired, keptBack: keptBack.slice(0, 1000), keptBackCount: keptBack.length },
        actor,
        eventId: nameUuid(`${rotationId}:retired`),
      },
    ]);
    this.options.log?.('old credential versions retired', { rotationId, references: keep.length, versionsRetired, keptBack: keptBack.length });
  }
}
