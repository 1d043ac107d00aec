/**
 * What one node's provisioning does next: pure, from its state and the time.
 * - three failed attempts to reach the BMC quarantine it at `registering`;
 * - a bill-of-materials mismatch quarantines it at `validating`, with every difference as evidence;
 * - each baseline component already at its version is settled without an update; the others go through the
 *   firmware update step (intent before effect, read-back verification), and a component that does not end
 *   updated quarantines the node at `baselining`;
 * - burn-in reads the node every interval until its end; any problem quarantines it at `burn-in`.
 */
import { assertNever, type EventData } from '../../events/index.js';
import type { InventoryCollected, ProvisioningStarted } from '../../events/index.js';
import { versionMatches } from '../firmware-rollout/step-decide.js';
import type { ProvisionState } from './provision-evolve.js';

export type ProvisionAction =
  | { kind: 'verify-access' }
  | { kind: 'collect-inventory' }
  | { kind: 'validated' }
  | { kind: 'mismatch'; differences: Array<{ field: string; declared: string; observed: string }> }
  | { kind: 'settle-component'; component: string; outcome: 'already-at-target'; version: string }
  | { kind: 'update-component'; component: string; pass: number }
  | { kind: 'start-burn-in'; until: number }
  | { kind: 'observe-burn-in' }
  | { kind: 'ready' }
  | { kind: 'quarantine'; stage: 'registering' | 'inventorying' | 'validating' | 'baselining' | 'burn-in'; reason: string }
  | { kind: 'wait' }
  | { kind: 'held' }
  | { kind: 'done' };

export const MAX_ACCESS_FAILURES = 3;

/** The declared bill of materials against what the BMC reports: each field declared and different is a difference. */
export function bomDifferences(declared: EventData<typeof ProvisioningStarted>['declared'], observed: EventData<typeof InventoryCollected>['observed']): Array<{ field: string; declared: string; observed: string }> {
  const differences: Array<{ field: string; declared: string; observed: string }> = [];
  for (const field of ['manufacturer', 'model', 'cpuCount', 'gpuCount', 'memoryGiB'] as const) {
    const want = declared[field];
    if (want === undefined) continue;
    const have = observed[field];
    const same = typeof want === 'number' ? typeof have === 'number' && Math.abs(have - want) <= (field === 'memoryGiB' ? Math.max(1, want * 0.02) : 0) : typeof have === 'string' && have.toLowerCase().includes(String(want).toLowerCase());
    if (!same) differences.push({ field, declared: String(want), observed: have === undefined ? 'not reported' : String(have) });
  }
  return differences;
}

export function decideProvision(state: ProvisionState, now: number): { action: ProvisionAction; due: number } {
  const at = (action: ProvisionAction, due = now) => ({ action, due });
  const spec = state.spec;
  if (!spec || state.stage === 'none') return at({ kind: 'wait' });
  switch (state.stage) {
    case 'ready':
    case 'abandoned':
      return at({ kind: 'done' });
    case 'quarantined':
      return at({ kind: 'held' });
    case 'registering':
      if (state.accessFailures >= MAX_ACCESS_FAILURES) return at({ kind: 'quarantine', stage: 'registering', reason: `the BMC could not be reached with the credentials on record (${state.accessFailures} attempts)` });
      return at({ kind: 'verify-access' }, state.accessFailures === 0 ? now : (state.lastObservationAt ?? now) + spec.burnInIntervalMs);
    case 'inventorying':
      return at({ kind: 'collect-inventory' });
    case 'validating': {
      const differences = bomDifferences(spec.declared, state.observed!.observed);
      return at(differences.length === 0 ? { kind: 'validated' } : { kind: 'mismatch', differences });
    }
    case 'baselining': {
      for (const image of spec.baseline) {
        const outcome = state.settled.get(image.component);
        if (outcome === undefined) {
          const installed = state.observed?.firmware[image.component];
          if (installed !== undefined && versionMatches(installed, image.version, image.component)) return at({ kind: 'settle-component', component: image.component, outcome: 'already-at-target', version: image.version });
          return at({ kind: 'update-component', component: image.component, pass: state.baselinePass });
        }
        if (outcome !== 'updated' && outcome !== 'already-at-target') return at({ kind: 'quarantine', stage: 'baselining', reason: `firmware ${image.component} ${image.version}: ${outcome}` });
      }
      return at({ kind: 'start-burn-in', until: now + spec.burnInMs });
    }
    case 'burn-in':
      if (state.burnInUntil === undefined) return at({ kind: 'start-burn-in', until: now + spec.burnInMs });
      if (state.burnInProblems.length > 0) return at({ kind: 'quarantine', stage: 'burn-in', reason: state.burnInProblems.join('; ') });
      if (state.unreachableInARow >= MAX_ACCESS_FAILURES) return at({ kind: 'quarantine', stage: 'burn-in', reason: `the BMC did not answer ${state.unreachableInARow} burn-in readings in a row` });
      if (now >= state.burnInUntil) return at({ kind: 'ready' });
      return at({ kind: 'observe-burn-in' }, Math.min(state.burnInUntil, (state.lastObservationAt ?? now) + spec.burnInIntervalMs));
    default:
      return assertNever(state.stage, 'provisioning stage');
  }
}
