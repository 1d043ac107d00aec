/**
 * One node's provisioning (`provision-<nodeId>`), folded from its events: registering (BMC reachable with the
 * credentials on record), inventorying, validating against the declared bill of materials, baselining firmware
 * (each component through the same update step as a rollout), burn-in, ready. A quarantined node waits for an
 * operator to release it at a stage they name; abandoned and ready are final.
 */
import { assertNever, isProvisionStreamEvent, type DataOf } from '../../events/index.js';
import type { SagaEvent } from '../saga-event.js';

export type ProvisionStage = 'none' | 'registering' | 'inventorying' | 'validating' | 'baselining' | 'burn-in' | 'ready' | 'quarantined' | 'abandoned';

export interface ProvisionState {
  version: number;
  nodeId: string;
  stage: ProvisionStage;
  spec: DataOf<'ProvisioningStarted'> | undefined;
  accessFailures: number;
  observed: DataOf<'InventoryCollected'> | undefined;
  /** Outcome per baseline component in the current pass through baselining. */
  settled: Map<string, string>;
  /** Passes through baselining (a release that re-enters it starts a new pass, with new step streams). */
  baselinePass: number;
  burnInUntil: number | undefined;
  lastObservationAt: number | undefined;
  /** Burn-in: readings in a row the BMC did not answer, and the problems of the last reading it answered. */
  unreachableInARow: number;
  burnInProblems: string[];
  quarantine: { stage: string; reason: string; keepsSlot: boolean } | undefined;
  startedAt: number | undefined;
}

export function initialProvision(nodeId: string): ProvisionState {
  return { version: 0, nodeId, stage: 'none', spec: undefined, accessFailures: 0, observed: undefined, settled: new Map(), baselinePass: 0, burnInUntil: undefined, lastObservationAt: undefined, unreachableInARow: 0, burnInProblems: [], quarantine: undefined, startedAt: undefined };
}

export function provisionStream(nodeId: string): string {
  return `provision-${nodeId}`;
}

export function evolveProvision(state: ProvisionState, event: SagaEvent): ProvisionState {
  const next: ProvisionState = { ...state, version: state.version + 1 };
  // Events of other types in the stream count toward its version only.
  if (!isProvisionStreamEvent(event)) return next;
  switch (event.type) {
    case 'ProvisioningStarted':
      next.spec = event.data;
      next.stage = 'registering';
      next.startedAt = event.recordedAt;
      break;
    case 'BmcAccessVerified':
      next.stage = 'inventorying';
      next.accessFailures = 0;
      break;
    case 'BmcAccessFailed':
      next.accessFailures = state.accessFailures + 1;
      next.lastObservationAt = event.recordedAt;
      break;
    case 'InventoryCollected':
      next.observed = event.data;
      next.stage = 'validating';
      break;
    case 'BomValidated':
      next.stage = 'baselining';
      next.baselinePass = state.baselinePass + 1;
      next.settled = new Map();
      break;
    case 'BaselineComponentSettled': {
      const data = event.data;
      next.settled = new Map(state.settled).set(data.component, data.outcome);
      break;
    }
    case 'BurnInStarted':
      next.stage = 'burn-in';
      next.burnInUntil = event.data.until;
      next.lastObservationAt = event.recordedAt;
      next.unreachableInARow = 0;
      next.burnInProblems = [];
      break;
    case 'BurnInObserved': {
      const data = event.data;
      next.lastObservationAt = event.recordedAt;
      next.unreachableInARow = data.reachable ? 0 : state.unreachableInARow + 1;
      if (data.reachable) next.burnInProblems = data.problems;
      break;
    }
    case 'NodeReady':
      next.stage = 'ready';
      break;
    case 'ProvisioningQuarantined': {
      const data = event.data;
      next.stage = 'quarantined';
      next.quarantine = { stage: data.stage, reason: data.reason, keepsSlot: data.keepsSlot };
      break;
    }
    case 'QuarantineReleased': {
      const data = event.data;
      if (state.stage !== 'quarantined') break;
      next.quarantine = undefined;
      next.accessFailures = 0;
      next.stage = data.resumeAt === 'ready' ? 'burn-in' : data.resumeAt;
      if (data.resumeAt === 'baselining') {
        next.baselinePass = state.baselinePass + 1;
        next.settled = new Map();
      }
      if (data.resumeAt === 'burn-in' || data.resumeAt === 'ready') next.burnInUntil = undefined;
      break;
    }
    case 'BomMismatchDetected':
      // The differences are recorded for the operator; the stage changes with the quarantine appended beside them.
      break;
    case 'ProvisioningAbandoned':
      next.stage = 'abandoned';
      break;
    default:
      return assertNever(event);
  }
  return next;
}
