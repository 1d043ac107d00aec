/**
 * Runs a rollout engine for every rollout that is not finished, and a provisioning engine for every node being
 * provisioned, in the process that runs the ledger (`start`): a saga requested through the API or the CLI is picked up
 * within one scan. Any number of processes may run a supervisor on one database: each saga is driven by the process
 * holding its lease (one lock session per process, `saga-ownership.ts`); the others stand by, holding no connection
 * for it, and one of them takes it over within a tick when the owner dies.
 */
import type { EventStore } from '../../src/ledger/index.js';
import { RolloutEngine, type BmcAccess, type RolloutEngineOptions } from './rollout-engine.js';
import { loadRollout } from './rollout-service.js';
import { loadProvision, ProvisioningEngine } from './provisioning-engine.js';
import { SagaOwnership } from './saga-ownership.js';
import { capacityStream, evolveCapacity, initialCapacity, type CapacityState } from '../capacity/capacity-evolve.js';
import type { VersionedCredentialStore } from '../../src/credentials/index.js';
import { RotationEngine, type RotationEngineOptions } from './rotation-engine.js';
import { loadRotation } from './rotation-service.js';

async function loadCapacity(store: EventStore, site: string): Promise<CapacityState> {
  const state = initialCapacity(site);
  for (const event of await store.readStreamToEnd(capacityStream(site))) evolveCapacity(state, { type: event.type, data: event.data, actor: event.actor, recordedAt: 0 });
  return state;
}

export interface SupervisorOptions {
  store: EventStore;
  access: (nodeId: string) => BmcAccess | undefined;
  scanMs?: number;
  engine?: Partial<Pick<RolloutEngineOptions, 'timing' | 'tickMs' | 'gateRetryMs' | 'maxInconclusive' | 'requestTimeoutMs'>> & { quietPeriodMs?: number };
  /** The versioned credential store: credential rotations run only where one is given. */
  credentials?: VersionedCredentialStore;
  rotation?: Partial<Pick<RotationEngineOptions, 'tickMs' | 'requestTimeoutMs' | 'retryBackoffMs' | 'unreachableRetryMs' | 'plainHttpSites' | 'generatePassword'>>;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

export class SagaSupervisor {
  private readonly running = new Map<string, Promise<unknown>>();
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly ownership: SagaOwnership;

  constructor(private readonly options: SupervisorOptions) {
    this.ownership = new SagaOwnership(options.store.connectionString, options.log);
  }

  start(): void {
    this.loop ??= this.scanForever();
  }

  private async scanForever(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        await this.scan();
      } catch (error) {
        this.options.log?.('saga scan failed; retrying', { error: String(error) });
      }
      await new Promise<void>((resolve) => {
        // The listener goes with the wait: one left per scan would pile up on the signal for the process's life.
        const done = (): void => {
          clearTimeout(timer);
          this.abort.signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, this.options.scanMs ?? 2_000);
        this.abort.signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  private async scan(): Promise<void> {
    await this.scanRollouts();
    await this.scanProvisioning();
    await this.scanRotations();
  }

  /** Credential rotations not finished (a completed one still to retire its old versions counts as not finished). */
  private async scanRotations(): Promise<void> {
    const credentials = this.options.credentials;
    if (!credentials) return;
    const streams = (await this.options.store.db.selectFrom('ledger_streams').select('stream').where('stream', 'like', 'rotation-%').execute()) as Array<{ stream: string }>;
    for (const { stream } of streams) {
      const rotationId = stream.slice('rotation-'.length);
      const key = `rotation:${rotationId}`;
      if (this.running.has(key)) continue;
      const state = await loadRotation(this.options.store, rotationId).catch(() => undefined);
      if (!state || state.status === 'aborted' || (state.status === 'completed' && (state.retired || !state.plan?.retireOld))) continue;
      const engine = new RotationEngine({ store: this.options.store, rotationId, credentials, ...this.options.rotation, ...(this.options.log ? { log: this.options.log } : {}), ownership: this.ownership });
      this.options.log?.('rotation engine started', { rotationId, status: state.status });
      const run = engine
        .run(this.abort.signal)
        .then((final) => this.options.log?.(engine.lostLease ? 'rotation engine lost its lease; standing by for it again' : 'rotation engine finished', { rotationId, status: final.status }))
        .catch((error: unknown) => this.options.log?.('rotation engine stopped with an error', { rotationId, error: String(error) }))
        .finally(() => setTimeout(() => this.running.delete(key), 1_000).unref());
      this.running.set(key, run);
    }
  }

  /** Nodes being provisioned and not finished or quarantined (a release makes them eligible again). */
  private async scanProvisioning(): Promise<void> {
    const streams = (await this.options.store.db.selectFrom('ledger_streams').select('stream').where('stream', 'like', 'provision-%').execute()) as Array<{ stream: string }>;
    const capacity = new Map<string, Promise<CapacityState>>(); // each site's slots, read once per scan
    const slotHeld = async (site: string, nodeId: string): Promise<boolean> => {
      let state = capacity.get(site);
      if (!state) capacity.set(site, (state = loadCapacity(this.options.store, site)));
      return (await state).slots.get((await state).slotByNode.get(nodeId) ?? '')?.sagaId === `provision-${nodeId}`;
    };
    for (const { stream } of streams) {
      const nodeId = stream.slice('provision-'.length);
      const key = `provision:${nodeId}`;
      if (this.running.has(key)) continue;
      const state = await loadProvision(this.options.store, nodeId);
      if (state.stage === 'none') continue;
      // Finished, or waiting for an operator: nothing to drive, unless the saga still holds a slot it must give back
      // (its process died between the last step and the release). A quarantine that keeps its slot keeps it.
      const finished = state.stage === 'ready' || state.stage === 'abandoned' || state.stage === 'quarantined';
      if (finished && (state.quarantine?.keepsSlot || !state.spec || !(await slotHeld(state.spec.site, nodeId)))) continue;
      const engine = new ProvisioningEngine({
        store: this.options.store,
        nodeId,
        access: this.options.access,
        ...(this.options.engine?.timing ? { timing: this.options.engine.timing } : {}),
        ...(this.options.engine?.quietPeriodMs !== undefined ? { quietPeriodMs: this.options.engine.quietPeriodMs } : {}),
        ...(this.options.engine?.requestTimeoutMs !== undefined ? { requestTimeoutMs: this.options.engine.requestTimeoutMs } : {}),
        ...(this.options.log ? { log: this.options.log } : {}),
        ownership: this.ownership,
      });
      const run = engine
        .run(this.abort.signal)
        .then((final) => this.options.log?.(engine.lostLease ? 'provisioning engine lost its lease; standing by for it again' : 'provisioning engine stopped', { nodeId, stage: final.stage }))
        .catch((error: unknown) => this.options.log?.('provisioning engine stopped with an error', { nodeId, error: String(error) }))
        .finally(() => setTimeout(() => this.running.delete(key), 1_000).unref());
      this.running.set(key, run);
    }
  }

  private async scanRollouts(): Promise<void> {
    const streams = (await this.options.store.db.selectFrom('ledger_streams').select('stream').where('stream', 'like', 'rollout-%').execute()) as Array<{ stream: string }>;
    for (const { stream } of streams) {
      const rolloutId = stream.slice('rollout-'.length);
      if (this.running.has(rolloutId)) continue;
      const state = await loadRollout(this.options.store, rolloutId).catch(() => undefined);
      if (!state || state.status === 'completed' || state.status === 'aborted') continue;
      const engine = new RolloutEngine({ store: this.options.store, rolloutId, access: this.options.access, ...this.options.engine, ...(this.options.log ? { log: this.options.log } : {}), ownership: this.ownership });
      this.options.log?.('rollout engine started', { rolloutId, status: state.status });
      const run = engine
        .run(this.abort.signal)
        .then((final) => this.options.log?.(engine.lostLease ? 'rollout engine lost its lease; standing by for it again' : 'rollout engine finished', { rolloutId, status: final.status }))
        .catch((error: unknown) => this.options.log?.('rollout engine stopped with an error', { rolloutId, error: String(error) }))
        .finally(() => {
          // A finished rollout is not picked up again; one that stopped with an error is, on the next scan.
          setTimeout(() => this.running.delete(rolloutId), 1_000).unref();
        });
      this.running.set(rolloutId, run);
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
    await Promise.allSettled([...this.running.values()]);
    await this.ownership.close();
  }
}
