/**
 * The faults that touch a BMC's events: a health change the BMC announces (`health`), and the field's failure modes
 * of push (`push-silent`, `push-stall`, `push-connection-cap`, `push-duplicate`, `push-reorder`). A reset's loss of
 * every subscription is not a fault of its own: every reset does it (`SimBmc.reset`).
 */
import type { Health } from '../profiles/bmc-profile.ts';
import type { SimBmc } from '../sim-bmc.ts';

export const EVENT_FAULT_KINDS = ['health', 'push-silent', 'push-stall', 'push-connection-cap', 'push-duplicate', 'push-reorder'] as const;
export type EventFaultKind = (typeof EVENT_FAULT_KINDS)[number];

export interface EventFaultSpec {
  fault: EventFaultKind;
  health?: Health | undefined;
  count?: number | undefined;
}

/** Applies an event fault to `bmcs`; returns what takes it back when its duration ends. */
export function applyEventFault(spec: EventFaultSpec, bmcs: readonly SimBmc[]): () => void {
  const withEvents = bmcs.filter((bmc) => bmc.events !== undefined);
  switch (spec.fault) {
    case 'health':
      for (const bmc of bmcs) changeHealth(bmc, spec.health ?? 'Critical');
      return () => undefined;
    case 'push-silent':
      return toggle(withEvents, 'silent');
    case 'push-duplicate':
      return toggle(withEvents, 'duplicate');
    case 'push-reorder':
      return toggle(withEvents, 'reorder');
    case 'push-stall':
      for (const bmc of withEvents) bmc.events?.stall();
      return () => undefined;
    case 'push-connection-cap': {
      const before = withEvents.map((bmc) => bmc.events?.cap ?? 0);
      for (const bmc of withEvents) if (bmc.events) bmc.events.cap = spec.count ?? 1;
      return () => withEvents.forEach((bmc, i) => bmc.events && (bmc.events.cap = before[i] ?? bmc.events.cap));
    }
    default: {
      const unreachable: never = spec.fault;
      throw new Error(`unknown event fault ${String(unreachable)}`);
    }
  }
}

function toggle(bmcs: readonly SimBmc[], flag: 'silent' | 'duplicate' | 'reorder'): () => void {
  for (const bmc of bmcs) if (bmc.events) bmc.events[flag] = true;
  return () => {
    for (const bmc of bmcs) if (bmc.events) bmc.events[flag] = false;
  };
}

/**
 * The BMC's system health becomes `health` (a PSU lost, a leak, a thermal trip): its System's `Status.Health` says so
 * from now on, its change counter moves, and it announces the change as `ResourceEvent.1.0.ResourceStatusChanged*`.
 */
export function changeHealth(bmc: SimBmc, health: Health): void {
  bmc.healthOverride = health;
  bmc.changes += 1;
  const system = systemPathOf(bmc);
  const suffix = health === 'OK' ? 'OK' : health;
  bmc.events?.emit(`ResourceEvent.1.0.ResourceStatusChanged${suffix}`, `The health of resource '${system}' has changed to ${health}.`, health, `${bmc.linkPrefix}${system}`);
}

const systemPaths = new WeakMap<SimBmc['capture'], string>();

/** Whether `path` is one of the BMC's Systems (each shows the health a `health` fault set). */
export function isSystemPath(path: string): boolean {
  return /^\/redfish\/v1\/Systems\/[^/?]+$/.test(path);
}

/** The BMC's first System by id, named as the origin of its health events. */
export function systemPathOf(bmc: SimBmc): string {
  let path = systemPaths.get(bmc.capture);
  if (path === undefined) {
    path = [...bmc.capture.resources.keys()].filter(isSystemPath).sort()[0] ?? '/redfish/v1/Systems/1';
    systemPaths.set(bmc.capture, path);
  }
  return path;
}
