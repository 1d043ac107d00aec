/**
 * Applies faults to BMCs and takes them back when their duration ends. Dark causes are counted per BMC, so
 * overlapping faults (a PDU failure during a flap) compose: a BMC answers again only when the last cause ends.
 */
import type { SimBehaviour } from './behaviour.ts';
import type { SimClock } from './clock.ts';
import { SimError } from './errors.ts';
import type { FaultKind, FaultSpec, FaultTarget } from './fault-spec.ts';
import { fnv1a } from './random.ts';
import type { SimBmc } from './sim-bmc.ts';
import { factoryPasswordOf } from './account-service.ts';
import { applyEventFault } from './events/event-faults.ts';

export interface ActiveFault {
  id: string;
  kind: FaultKind;
  bmcs: string[];
  startedAt: number;
  /** Simulated time the fault ends, when it has a duration. */
  endsAt: number | undefined;
}

export interface FaultEngineOptions {
  clock: SimClock;
  behaviour: SimBehaviour;
  bmcs: readonly SimBmc[];
  seed: number;
  onReset?: (bmc: SimBmc) => void;
  /** A `certificate-replaced` fault: the BMC's TLS side makes a new key and certificate. */
  onCertificateReplaced?: (bmc: SimBmc) => void;
}

export class FaultEngine {
  private readonly active = new Map<string, { fault: ActiveFault; end: () => void }>();
  private nextId = 1;
  private readonly byId = new Map<string, SimBmc>();

  constructor(private readonly options: FaultEngineOptions) {
    for (const bmc of options.bmcs) this.byId.set(bmc.id, bmc);
  }

  /** The BMCs a target names. Throws SIM_UNKNOWN_TARGET when a named id matches nothing. */
  resolve(target: FaultTarget): SimBmc[] {
    if (target.all) return [...this.options.bmcs];
    const chosen = new Set<SimBmc>();
    for (const id of target.bmc ?? []) {
      const bmc = this.byId.get(id);
      if (!bmc) throw new SimError('SIM_UNKNOWN_TARGET', `no BMC with id ${id}`, { field: 'target.bmc', id });
      chosen.add(bmc);
    }
    const byPlacement = (field: 'rack' | 'pdu' | 'tor' | 'cdu' | 'site'): void => {
      for (const id of target[field] ?? []) {
        const matches = this.options.bmcs.filter((bmc) => bmc.placement[field] === id);
        if (matches.length === 0) throw new SimError('SIM_UNKNOWN_TARGET', `no BMC is fed by ${field} ${id}`, { field: `target.${field}`, id });
        for (const bmc of matches) chosen.add(bmc);
      }
    };
    byPlacement('rack');
    byPlacement('pdu');
    byPlacement('tor');
    byPlacement('cdu');
    byPlacement('site');
    return [...chosen];
  }

  /** Applies a fault now. Throws SIM_FAULT_INVALID or SIM_UNKNOWN_TARGET without touching any BMC. */
  inject(spec: FaultSpec): ActiveFault {
    const { clock, behaviour } = this.options;
    const bmcs = this.resolve(spec.target);
    const needsDuration = spec.fault === 'dark' || spec.fault === 'flap' || spec.fault === 'slow' || spec.fault === 'lockout';
    if (needsDuration && spec.duration === undefined) {
      throw new SimError('SIM_FAULT_INVALID', `fault is invalid: duration: required for ${spec.fault}`, { field: 'duration' });
    }
    const now = clock.now();
    const id = `fault-${this.nextId++}`;
    const fault: ActiveFault = { id, kind: spec.fault, bmcs: bmcs.map((bmc) => bmc.id), startedAt: now, endsAt: spec.duration !== undefined ? now + spec.duration : undefined };
    let end: () => void = () => undefined;
    switch (spec.fault) {
      case 'dark': {
        for (const bmc of bmcs) bmc.darkCauses++;
        end = () => {
          for (const bmc of bmcs) {
            bmc.darkCauses--;
            bmc.releaseHeldIfUp(clock.now());
          }
        };
        break;
      }
      case 'flap': {
        const downMs = spec.down ?? 10_000;
        const upMs = spec.up ?? 20_000;
        let dark = false;
        let timer: { cancel(): void } | undefined;
        const toggle = (): void => {
          dark = !dark;
          for (const bmc of bmcs) {
            bmc.darkCauses += dark ? 1 : -1;
            if (!dark) bmc.releaseHeldIfUp(clock.now());
          }
          timer = clock.schedule(dark ? downMs : upMs, toggle);
        };
        toggle();
        end = () => {
          timer?.cancel();
          if (dark) {
            dark = false;
            for (const bmc of bmcs) {
              bmc.darkCauses--;
              bmc.releaseHeldIfUp(clock.now());
            }
          }
        };
        break;
      }
      case 'slow': {
        const factor = spec.factor ?? 10;
        for (const bmc of bmcs) bmc.slowFactor *= factor;
        end = () => {
          for (const bmc of bmcs) bmc.slowFactor /= factor;
        };
        break;
      }
      case 'reset':
        for (const bmc of bmcs) {
          bmc.reset(clock, spec.duration ?? behaviour.resetDarkMs);
          this.options.onReset?.(bmc);
        }
        fault.endsAt = now + (spec.duration ?? behaviour.resetDarkMs);
        break;
      case 'rotate-password':
        for (const bmc of bmcs) bmc.password = spec.password ?? `rotated-${(fnv1a(`${this.options.seed}:${bmc.id}:${id}`) >>> 0).toString(36)}`;
        break;
      case 'lockout':
        for (const bmc of bmcs) {
          bmc.lockedUntil = Math.max(bmc.lockedUntil, now + (spec.duration ?? behaviour.lockoutMs));
          bmc.counters.lockouts++;
        }
        break;
      case 'password-policy':
        for (const bmc of bmcs) bmc.refusePasswordChanges += spec.count ?? 1;
        break;
      case 'factory-reset':
        for (const bmc of bmcs) {
          bmc.password = factoryPasswordOf(bmc);
          bmc.consecutiveBadLogins = 0;
          bmc.lockedUntil = 0;
          bmc.reset(clock, spec.duration ?? behaviour.resetDarkMs);
          this.options.onReset?.(bmc);
        }
        fault.endsAt = now + (spec.duration ?? behaviour.resetDarkMs);
        break;
      case 'firmware-failure':
        for (const bmc of bmcs) bmc.failingUpdates += spec.count ?? 1;
        break;
      case 'update-fault':
        for (const bmc of bmcs) (bmc.updateFaults ??= []).push({ mode: spec.mode ?? 'fail', image: spec.image, remaining: spec.count ?? 1 });
        break;
      case 'certificate-replaced':
        for (const bmc of bmcs) this.options.onCertificateReplaced?.(bmc);
        break;
      case 'health':
      case 'push-silent':
      case 'push-stall':
      case 'push-connection-cap':
      case 'push-duplicate':
      case 'push-reorder':
        end = applyEventFault({ fault: spec.fault, health: spec.health, count: spec.count }, bmcs);
        break;
      default: {
        const unreachable: never = spec.fault;
        throw new Error(`unknown fault ${String(unreachable)}`);
      }
    }
    let timer: { cancel(): void } | undefined;
    const finish = (): void => {
      timer?.cancel();
      if (this.active.delete(id)) end();
    };
    this.active.set(id, { fault, end: finish });
    if (fault.endsAt !== undefined) timer = clock.schedule(fault.endsAt - now, finish);
    else this.active.delete(id);
    return fault;
  }

  /** Ends a fault early. Returns false when no such fault is active. */
  clear(id: string): boolean {
    const entry = this.active.get(id);
    if (!entry) return false;
    entry.end();
    return true;
  }

  list(): ActiveFault[] {
    return [...this.active.values()].map((entry) => entry.fault);
  }

  clearAll(): void {
    for (const entry of [...this.active.values()]) entry.end();
  }
}
