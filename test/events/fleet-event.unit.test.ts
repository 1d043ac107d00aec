import { describe, expect, it } from 'vitest';
import {
  assertNever,
  capacityStreamEvents,
  fleetCatalogue,
  fleetEventDefinitions,
  isCapacityStreamEvent,
  isEventOf,
  isFleetEvent,
  isProvisionStreamEvent,
  isRolloutStreamEvent,
  isStepStreamEvent,
  payloadString,
  provisionStreamEvents,
  rolloutStreamEvents,
  sagaProgressEvents,
  stepStreamEvents,
  type EventShape,
  type StepStreamEvent,
} from '../../events/index.js';

describe('events carry their types', () => {
  it('the union covers exactly the catalogue: every type it validates is a member, and nothing else', () => {
    expect(fleetEventDefinitions.map((definition) => definition.type).sort()).toEqual(fleetCatalogue.types());
    for (const type of fleetCatalogue.types()) expect(isFleetEvent({ type, data: {} })).toBe(true);
    expect(isFleetEvent({ type: 'NoSuchEvent', data: {} })).toBe(false);
  });

  it('each saga stream has its own closed union, and together they are every saga event', () => {
    const streams = [rolloutStreamEvents, stepStreamEvents, capacityStreamEvents, provisionStreamEvents];
    expect(streams.flat().map((definition) => definition.type)).toEqual(sagaProgressEvents.map((definition) => definition.type));
    const guards = [isRolloutStreamEvent, isStepStreamEvent, isCapacityStreamEvent, isProvisionStreamEvent];
    streams.forEach((definitions, index) => {
      for (const { type } of definitions) {
        // A type belongs to its own stream's union only.
        expect(guards.map((guard) => guard({ type, data: {} }))).toEqual(guards.map((_, other) => other === index));
      }
    });
  });

  it('a guard narrows data to the current payload of the type, with no cast', () => {
    const event: EventShape = { type: 'NodeCordoned', data: { nodeId: 'n1', reason: 'swap' } };
    expect(isEventOf(event, 'NodeCordoned') ? event.data.reason : null).toBe('swap');
    expect(isEventOf(event, ['NodeUncordoned', 'NodeReleased'])).toBe(false);
    expect(payloadString(event, 'nodeId')).toBe('n1');
    expect(payloadString({ type: 'X', data: { nodeId: 7 } }, 'nodeId')).toBeUndefined();
  });

  it('a switch over a closed union that meets a value the types did not foresee fails loudly', () => {
    const describeStep = (event: StepStreamEvent): string => {
      switch (event.type) {
        case 'StepStarted':
        case 'UpdateIntentRecorded':
        case 'UpdateSubmitted':
        case 'UpdateSubmissionFailed':
        case 'BmcTaskObserved':
        case 'BmcTaskVanished':
        case 'ActivationRequested':
        case 'VersionObserved':
        case 'VersionVerified':
        case 'ReconcileProbed':
        case 'RetryScheduled':
        case 'StepHeld':
        case 'StepSucceeded':
        case 'StepFailed':
        case 'StepQuarantined':
        case 'StepOperatorAction':
          return event.type;
        default:
          return assertNever(event);
      }
    };
    expect(() => describeStep({ type: 'Unforeseen', data: {} } as unknown as StepStreamEvent)).toThrow('unexpected event: Unforeseen');
  });
});
