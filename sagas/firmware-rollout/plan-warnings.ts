/**
 * What an operator should know about a plan before approving it, found in the plan itself: targets whose inventory
 * was never read (they all fall into one stratum, so the canary cannot be spread across hardware and is a random
 * pick), and targets whose installed version is unknown (the plan cannot tell who is already at the target).
 * Pure; each warning has a stable code and the number of nodes it concerns.
 */
import type { RolloutPlan } from './rollout-planner.js';

export type PlanWarning =
  | { code: 'PLAN_INVENTORY_MISSING'; nodes: number; targets: number; message: string }
  | { code: 'PLAN_FROM_VERSION_UNKNOWN'; nodes: number; targets: number; message: string };

export function planWarnings(plan: Pick<RolloutPlan, 'targets' | 'firmware'>): PlanWarning[] {
  const targets = plan.targets.length;
  const warnings: PlanWarning[] = [];
  const noInventory = plan.targets.filter((target) => target.vendor === 'unknown' && target.model === 'unknown').length;
  if (noInventory > 0) {
    warnings.push({
      code: 'PLAN_INVENTORY_MISSING',
      nodes: noInventory,
      targets,
      message: `${noInventory} of ${targets} targets have no inventory read yet (vendor and model unknown): they share one stratum, so the canary is a random pick among them, not one node per kind of hardware. Plan again once the poller has read them (fleet-ledger nodes list shows vendor and model).`,
    });
  }
  const noVersion = plan.targets.filter((target) => target.fromVersion === 'unknown').length;
  if (noVersion > 0) {
    warnings.push({
      code: 'PLAN_FROM_VERSION_UNKNOWN',
      nodes: noVersion,
      targets,
      message: `${noVersion} of ${targets} targets have no known ${plan.firmware.component} version: the plan cannot tell which are already at ${plan.firmware.version} (each is read before its update).`,
    });
  }
  return warnings;
}
