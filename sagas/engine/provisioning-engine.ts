/**
 * Drives one node's provisioning: reads the BMC (access, inventory, health during burn-in), validates against the
 * declared bill of materials, and brings the firmware to its baseline through the same update step a rollout uses
 * (so there is one flashing path, with its intent-before-effect and read-back guarantees). While the node is being
 * disrupted (baselining, burn-in) it holds a slot of its site's capacity stream, shared with every rollout.
 * Resumable the same way as a rollout: every decision is made again from the stream after a restart. One process
 * drives a node's provisioning at a time (its lease, as for a rollout: `saga-ownership.ts`); the others stand by.
 */
import type { Kysely } from 'kysely';
import { openAlarmLinesOf } from '../../projections/index.js';
import type { Actor, ProposedEvent } from '../../events/index.js';
import { DriverError, RedfishDriver, type RedfishDriverOptions } from '../../src/drivers/index.js';
import type { EventStore } from '../../src/ledger/index.js';
import type { ReadModelDatabase } from '../../projections/index.js';
import { capacityStream, evolveCapacity, initialCapacity } from '../capacity/capacity-evolve.js';
import { defaultStepTiming, type StepTiming } from '../firmware-rollout/step-decide.js';
import { decideProvision } from '../provisioning/provision-decide.js';
import { burnInAlarmProblems, type OpenAlarm } from '../provisioning/burn-in-alarms.js';
import { evolveProvision, initialProvision, provisionStream, type ProvisionState } from '../provisioning/provision-evolve.js';
import { nameUuid } from '../../src/ledger/index.js';
import { driveFirmwareStep, loadStepState, type BmcAccess } from './step-driver.js';
import { sagaBmcTls } from './bmc-trust.js';
import type { SagaOwnership, SagaLease } from './saga-ownership.js';
import { runWithSagaLease } from './saga-lease-shell.js';

type SagaActor = Extract<Actor, { kind: 'saga' }>;

export interface ProvisioningEngineOptions {
  store: EventStore;
  nodeId: string;
  access: (nodeId: string) => BmcAccess | undefined;
  timing?: Partial<StepTiming>;
  quietPeriodMs?: number;
  requestTimeoutMs?: number;
  now?: () => number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** The process's saga locks (a supervisor shares one among its engines); by default the engine opens its own. */
  ownership?: SagaOwnership;
  /** How often an engine standing by tries to take the provisioning over. Default 1 s. */
  leaseRetryMs?: number;
}

/** The advisory lock key of a node's provisioning. */
export function provisionLockKey(nodeId: string): string {
  return `fleet-ledger:provision:${nodeId}`;
}

export async function loadProvision(store: EventStore, nodeId: string): Promise<ProvisionState> {
  let state = initialProvision(nodeId);
  for (const event of await store.readStreamToEnd(provisionStream(nodeId))) state = evolveProvision(state, { type: event.type, data: event.data, actor: event.actor, recordedAt: event.recordedAt.getTime() });
  return state;
}

/** The component name a baseline step stream uses: letters, digits, dot, dash, underscore. */
function stepSagaId(pass: number, component: string): string {
  return `prov${pass}-${component.replace(/[^A-Za-z0-9._-]/g, '_')}`.slice(0, 80);
}

export class ProvisioningEngine {
  private stopping = false;
  private leaseLost = false;
  private readonly now: () => number;

  constructor(private readonly options: ProvisioningEngineOptions) {
    this.now = options.now ?? Date.now;
  }

  stop(): void {
    this.stopping = true;
  }

  /** True when the run ended because the lease was lost (another process may drive the node now). */
  get lostLease(): boolean {
    return this.leaseLost;
  }

  /**
   * Runs until the node is ready, abandoned or quarantined (an operator's release starts it again), or `signal`, or
   * the lease is lost. Stands by first while another process drives the node.
   */
  async run(signal?: AbortSignal): Promise<ProvisionState> {
    const { store, nodeId } = this.options;
    return runWithSagaLease(
      {
        lockKey: provisionLockKey(nodeId),
        connectionString: store.connectionString,
        ownership: this.options.ownership,
        retryMs: this.options.leaseRetryMs ?? 1_000,
        signal,
        stopping: () => this.stopping,
        onLost: () => {
          this.leaseLost = true;
          this.stopping = true;
          this.options.log?.('provisioning lease lost: this engine stops and appends nothing more', { nodeId });
        },
        standingBy: () => loadProvision(store, nodeId),
        log: this.options.log,
      },
      (lease) => this.runOwned(lease, signal),
    );
  }

  private async runOwned(lease: SagaLease, signal: AbortSignal | undefined): Promise<ProvisionState> {
    const { store, nodeId } = this.options;
    const stream = provisionStream(nodeId);
    const actor = { kind: 'saga' as const, id: `provision:${nodeId}`, lease: lease.stamp };
    const owned = (): boolean => !lease.lost.aborted;
    const mustOwn = (): void => {
      if (!owned()) throw new Error(`provisioning of ${nodeId} is not held by this engine (lease lost)`);
    };
    let state = await loadProvision(store, nodeId);
    const append = async (events: Array<Omit<ProposedEvent, 'actor'>>): Promise<void> => {
      mustOwn();
      await store.append(stream, events.map((event) => ({ ...event, actor })), { expectedVersion: state.version });
      state = await loadProvision(store, nodeId);
    };
    const access = this.options.access(nodeId);
    // The certificate trusted as the poller trusts it; a node latched by a changed certificate gets no credential.
    const tls = await sagaBmcTls(store, nodeId, access).catch((error: unknown) => error);
    const driver = access && !(tls instanceof Error) ? new RedfishDriver({ ...access, ...(tls ? { tls } : {}), authMode: 'basic', requestTimeoutMs: this.options.requestTimeoutMs ?? 30_000 } as RedfishDriverOptions) : undefined;
    const site = state.spec?.site ?? 'unknown';
    const slotId = (pass: number) => `provision-${nodeId}:${pass}`;
    try {
      while (!signal?.aborted && !this.stopping) {
        state = await loadProvision(store, nodeId); // operators release or abandon while it runs
        const now = this.now();
        const { action, due } = decideProvision(state, now);
        if (due > now || action.kind === 'wait') {
          await sleep(Math.min(Math.max(due - now, 200), 1_000));
          continue;
        }
        if (action.kind === 'done' || action.kind === 'held') {
          // A node whose firmware step ended in doubt keeps its slot until an operator releases it.
          if (!state.quarantine?.keepsSlot) await this.releaseSlot(site, nodeId, `provisioning ${state.stage}`, mustOwn, actor);
          return state;
        }
        try {
          switch (action.kind) {
            case 'verify-access':
              if (tls instanceof Error) throw tls; // latched by a changed certificate: nothing is sent
              if (!driver) throw new DriverError('DRIVER_UNREACHABLE', `no BMC address or credentials for ${nodeId}`);
              await driver.readFirmwareVersion('BMC');
              await append([{ type: 'BmcAccessVerified', data: { nodeId } }]);
              break;
            case 'collect-inventory': {
              const observations = await driver!.observe({ only: ['NodeInventoryObserved', 'FirmwareInventoryObserved'] });
              const inventory = observations.find((o) => o.type === 'NodeInventoryObserved')?.data;
              const firmwareObservation = observations.find((o) => o.type === 'FirmwareInventoryObserved')?.data;
              const firmware: Record<string, string> = {};
              for (const component of firmwareObservation?.components ?? []) {
                firmware[component.id.slice(0, 200)] = component.version.slice(0, 200);
                firmware[component.component.slice(0, 200)] ??= component.version.slice(0, 200);
              }
              if (typeof inventory?.bmc?.firmwareVersion === 'string') firmware['BMC'] = inventory.bmc.firmwareVersion;
              const observed = {
                ...(inventory?.system?.manufacturer ? { manufacturer: String(inventory.system.manufacturer).slice(0, 200) } : {}),
                ...(inventory?.system?.model ? { model: String(inventory.system.model).slice(0, 200) } : {}),
                ...(typeof inventory?.cpus?.count === 'number' ? { cpuCount: inventory.cpus.count } : {}),
                ...(typeof inventory?.gpus?.count === 'number' ? { gpuCount: inventory.gpus.count } : {}),
                ...(typeof inventory?.memory?.totalGiB === 'number' ? { memoryGiB: inventory.memory.totalGiB } : {}),
              };
              await append([{ type: 'InventoryCollected', data: { nodeId, observed, firmware: Object.fromEntries(Object.entries(firmware).slice(0, 500)) } }]);
              break;
            }
            case 'validated':
              await append([{ type: 'BomValidated', data: { nodeId } }]);
              break;
            case 'mismatch':
              await append([
                { type: 'BomMismatchDetected', data: { nodeId, differences: action.differences.slice(0, 50) } },
                { type: 'ProvisioningQuarantined', data: { nodeId, stage: 'validating', reason: action.differences.map((d) => `${d.field}: declared ${d.declared}, observed ${d.observed}`).join('; ').slice(0, 2000) } },
              ]);
              break;
            case 'settle-component':
              await append([{ type: 'BaselineComponentSettled', data: { nodeId, component: action.component, outcome: action.outcome, detail: `already ${action.version}` } }]);
              break;
            case 'update-component': {
              if (!(await this.holdSlot(site, nodeId, slotId(action.pass), state, mustOwn, actor))) {
                await sleep(1_000); // the site is at its cap: wait for a slot
                break;
              }
              const image = state.spec!.baseline.find((candidate) => candidate.component === action.component)!;
              const sagaId = stepSagaId(action.pass, action.component);
              let step = await loadStepState(store, sagaId, nodeId);
              await driveFirmwareStep({
                store,
                rolloutId: sagaId,
                nodeId,
                plan: { firmware: image, verifyReads: 3, retryBudget: 1, stepDeadlineMs: 2 * 3_600_000, quietPeriodMs: this.options.quietPeriodMs ?? 10 * 60_000 },
                slotId: slotId(action.pass),
                timing: { ...defaultStepTiming, ...this.options.timing },
                access,
                now: this.now,
                stopping: () => this.stopping || signal?.aborted === true,
                owned,
                lease: lease.stamp,
                get: () => step,
                set: (next) => {
                  step = next;
                },
                requestTimeoutMs: this.options.requestTimeoutMs ?? 30_000,
                ...(this.options.log ? { log: this.options.log } : {}),
              });
              if (step.outcome) {
                await append([{ type: 'BaselineComponentSettled', data: { nodeId, component: action.component, outcome: step.outcome, detail: (step.cause ?? '').slice(0, 2000) } }]);
              } else if (step.phase === 'held') {
                await append([{ type: 'ProvisioningQuarantined', data: { nodeId, stage: 'baselining', reason: `firmware ${action.component}: ${step.hold ?? 'held'}: ${step.cause ?? ''}`.slice(0, 2000), keepsSlot: true } }]);
              }
              break;
            }
            case 'start-burn-in':
              await append([{ type: 'BurnInStarted', data: { nodeId, until: action.until } }]);
              break;
            case 'observe-burn-in': {
              const problems: string[] = [];
              let reachable = true;
              try {
                const health = await driver!.readHealthSummary();
                problems.push(...health.problems.map((problem) => problem.slice(0, 300)));
              } catch (error) {
                if (!(error instanceof DriverError)) throw error;
                reachable = false;
                problems.push(`unreachable: ${error.code}`);
              }
              if (reachable) problems.push(...burnInAlarmProblems(await openAlarmsOf(store.db as never, nodeId), state.spec?.baseline ?? []));
              await append([{ type: 'BurnInObserved', data: { nodeId, reachable, problems: problems.slice(0, 50) } }]);
              break;
            }
            case 'ready':
              await append([{ type: 'NodeReady', data: { nodeId } }]);
              break;
            case 'quarantine':
              await append([{ type: 'ProvisioningQuarantined', data: { nodeId, stage: action.stage, reason: action.reason.slice(0, 2000) } }]);
              break;
          }
        } catch (error) {
          if (error instanceof DriverError) {
            if (action.kind === 'verify-access') await append([{ type: 'BmcAccessFailed', data: { nodeId, code: error.code, message: error.message.slice(0, 2000) } }]);
            else await sleep(1_000);
            continue;
          }
          if ((error as { code?: string }).code === 'LEDGER_WRONG_EXPECTED_VERSION') continue; // an operator wrote: decide again
          if ((error as { code?: string }).code === 'LEDGER_STALE_EPOCH') {
            // Another process took the node over before this one heard that its lock session ended.
            this.leaseLost = true;
            this.stopping = true;
            this.options.log?.('provisioning taken over by another process (stale epoch): this engine stops', { nodeId });
            return state;
          }
          throw error;
        }
      }
      return state;
    } finally {
      await driver?.close();
    }
  }

  /** Takes the node's slot (idempotent), unless the site is at its shared cap. */
  private async holdSlot(site: string, nodeId: string, slotId: string, state: ProvisionState, mustOwn: () => void, actor: SagaActor): Promise<boolean> {
    const { store } = this.options;
    const capacity = initialCapacity(site);
    for (const event of await store.readStreamToEnd(capacityStream(site))) evolveCapacity(capacity, { type: event.type, data: event.data, actor: event.actor, recordedAt: 0 });
    const held = capacity.slotByNode.get(nodeId);
    if (held === slotId) return true;
    if (held !== undefined) return false; // another saga owns the node now
    if (capacity.siteCap !== undefined && capacity.slots.size >= capacity.siteCap) return false;
    const spec = state.spec!;
    mustOwn();
    await store.append(
      capacityStream(site),
      [{ type: 'SlotAcquired', data: { site, slotId, sagaId: `provision-${nodeId}`, nodeId, rack: spec.rack, pdu: '', tor: '', cdu: '' }, actor, eventId: nameUuid(`${slotId}:acquired`) }],
      { expectedVersion: capacity.version === 0 ? 'no_stream' : capacity.version },
    );
    return true;
  }

  /**
   * Gives the node's slot back. The site's capacity stream is shared with every saga there, so another one's append
   * between the read and this one is a conflict to read again, not a failure: the saga has ended and nobody else would
   * release its slot (the supervisor also picks up a finished saga still holding one, after a crash here).
   */
  private async releaseSlot(site: string, nodeId: string, why: string, mustOwn: () => void, actor: SagaActor): Promise<void> {
    const { store } = this.options;
    for (let attempt = 1; ; attempt++) {
      const capacity = initialCapacity(site);
      for (const event of await store.readStreamToEnd(capacityStream(site))) evolveCapacity(capacity, { type: event.type, data: event.data, actor: event.actor, recordedAt: 0 });
      const slotId = capacity.slotByNode.get(nodeId);
      const slot = slotId ? capacity.slots.get(slotId) : undefined;
      if (!slot || slot.sagaId !== `provision-${nodeId}`) return;
      mustOwn();
      try {
        await store.append(
          capacityStream(site),
          [{ type: 'SlotReleased', data: { site, slotId: slot.slotId, sagaId: slot.sagaId, nodeId, why }, actor, eventId: nameUuid(`${slot.slotId}:released`) }],
          { expectedVersion: capacity.version },
        );
        return;
      } catch (error) {
        if ((error as { code?: string }).code !== 'LEDGER_WRONG_EXPECTED_VERSION' || attempt >= 20) throw error;
        await sleep(50 * attempt);
      }
    }
  }
}

async function openAlarmsOf(db: Kysely<ReadModelDatabase>, nodeId: string): Promise<OpenAlarm[]> {
  const rows = await openAlarmLinesOf(db, nodeId, 20).catch(() => [] as Array<{ kind: string; summary: string; evidence: unknown }>);
  return rows.map((row) => ({ kind: row.kind, summary: row.summary, evidence: row.evidence as OpenAlarm['evidence'] }));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
