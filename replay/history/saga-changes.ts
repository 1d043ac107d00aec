/**
 * What the sagas did in a window: each node's firmware steps (started, succeeded, failed, held, quarantined, acted on
 * by an operator), the rollouts' own milestones, and provisioning stages. A step's events after `StepStarted` do not
 * repeat the rollout and node; they are read from the step stream's first event. Pure.
 */
import { payloadString, type RecordedEvent } from '../../events/index.js';
import { summarizeEvent } from './event-summary.js';

export const stepChangeOf = {
  StepStarted: 'started',
  StepSucceeded: 'succeeded',
  StepFailed: 'failed',
  StepHeld: 'held',
  StepQuarantined: 'quarantined',
  StepOperatorAction: 'operator-action',
} as const;
export type StepChangeKind = (typeof stepChangeOf)[keyof typeof stepChangeOf];
export const stepTypes = Object.keys(stepChangeOf) as Array<keyof typeof stepChangeOf>;

export const rolloutMilestoneTypes = [
  'RolloutPlanned',
  'RolloutApproved',
  'RolloutStarted',
  'WaveOpened',
  'GateEvaluated',
  'WaveAdvanced',
  'RolloutPaused',
  'RolloutHalted',
  'RolloutResumed',
  'RolloutAborted',
  'RolloutCapTightened',
  'RolloutCompleted',
] as const;

export const provisioningTypes = ['ProvisioningStarted', 'BomMismatchDetected', 'BaselineComponentSettled', 'NodeReady', 'ProvisioningQuarantined', 'QuarantineReleased', 'ProvisioningAbandoned'] as const;

export interface StepChange {
  change: StepChangeKind;
  rolloutId: string | null;
  nodeId: string | null;
  component: string | null;
  targetVersion: string | null;
  position: number;
  at: string;
  summary: string;
  /** Who acted, for an operator's verb. */
  by: string | null;
}

export interface SagaMilestone {
  type: string;
  /** The rollout, or the node being provisioned. */
  subject: string;
  position: number;
  at: string;
  summary: string;
  by: string | null;
}

function byOf(event: RecordedEvent): string | null {
  return event.actor.kind === 'operator' ? event.actor.id : null;
}

/** `firstOfStream`: the first event (the `StepStarted`) of each step stream the window touches. */
export function stepChanges(events: readonly RecordedEvent[], firstOfStream: ReadonlyMap<string, RecordedEvent>): StepChange[] {
  return events.flatMap((event) => {
    const change = stepChangeOf[event.type as keyof typeof stepChangeOf];
    if (!change) return [];
    const first = event.type === 'StepStarted' ? event : firstOfStream.get(event.stream);
    const started = first && { rolloutId: payloadString(first, 'rolloutId'), nodeId: payloadString(first, 'nodeId'), component: payloadString(first, 'component'), targetVersion: payloadString(first, 'targetVersion') };
    const named = payloadString(event, 'nodeId');
    return [
      {
        change,
        rolloutId: started?.rolloutId ?? null,
        nodeId: named ?? started?.nodeId ?? null,
        component: started?.component ?? null,
        targetVersion: started?.targetVersion ?? null,
        position: event.position,
        at: event.recordedAt.toISOString(),
        summary: summarizeEvent(event),
        by: byOf(event),
      },
    ];
  });
}

export function sagaMilestones(events: readonly RecordedEvent[], types: readonly string[]): SagaMilestone[] {
  const wanted = new Set(types);
  return events
    .filter((event) => wanted.has(event.type))
    .map((event) => {
      return { type: event.type, subject: payloadString(event, 'rolloutId') ?? payloadString(event, 'nodeId') ?? event.stream, position: event.position, at: event.recordedAt.toISOString(), summary: summarizeEvent(event), by: byOf(event) };
    });
}
