/**
 * Specifications for deciders, read as the rule they state: `given(events).when(command).then(events)`.
 *
 * `given` folds the events with the decider's `evolve` as `handleCommand` does after reading a stream; the i-th event
 * (from 0) sits at position i + 1 and stream version i + 1, recorded at `recordedAt(i)` (by default second i + 1 of
 * the epoch) by an operator. Then:
 * - `then(events)`: the command records exactly these events;
 * - `thenUnchanged(position)`: it records nothing, and answers with this position;
 * - `thenRefused(refusal)`: it records nothing and is refused (the refusal matched partially).
 */
import { expect } from 'vitest';
import type { Actor } from '../../events/index.js';
import type { Decider, Decision, Placement } from '../../sagas/index.js';

export interface DeciderSpecOptions {
  recordedAt?: (index: number) => number;
  actor?: (index: number) => Actor;
}

const operator: Actor = { kind: 'operator', id: 'spec-operator', role: 'operator' };

export function deciderSpec<Command, Event, State, Refusal>(decider: Decider<Command, Event, State, Refusal>) {
  return {
    given(events: readonly Event[], options: DeciderSpecOptions = {}) {
      let state = decider.initialState();
      events.forEach((event, index) => {
        const placement: Placement = {
          position: index + 1,
          streamVersion: index + 1,
          recordedAt: options.recordedAt?.(index) ?? (index + 1) * 1_000,
          actor: options.actor?.(index) ?? operator,
        };
        state = decider.evolve(state, event, placement);
      });
      return {
        state,
        when(command: Command) {
          const decision: Decision<Event, Refusal> = decider.decide(command, state);
          return {
            decision,
            then(expected: readonly Event[]): void {
              expect(decision).toEqual({ kind: 'record', events: expected });
            },
            thenUnchanged(position: number): void {
              expect(decision).toEqual({ kind: 'unchanged', position });
            },
            thenRefused(refusal: Partial<Refusal>): void {
              expect(decision).toMatchObject({ kind: 'refused', refusal });
            },
          };
        },
      };
    },
  };
}
