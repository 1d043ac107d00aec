/**
 * Acknowledging an alarm, decided from its `alarm-<alarmId>` stream: an occurrence already acknowledged records
 * nothing more and is answered with the acknowledgement's position. An alarm id can open again after it closed (a saga
 * held twice); the command carries when the current occurrence opened, and only an acknowledgement recorded since then
 * counts. Pure: imports no I/O.
 */
import type { FleetEvent } from '../../events/index.js';
import { record, unchanged, type Decider, type Decision, type Placement } from '../decider.js';

export interface AlarmAck {
  readonly alarmId: string;
  readonly note?: string;
  /** When the alarm's current occurrence opened, milliseconds since the epoch (from the alarms read model). */
  readonly openedAt: number;
}

export interface AlarmAckState {
  /** The latest acknowledgement: where it is and when the ledger recorded it. */
  readonly lastAck: { readonly position: number; readonly recordedAt: number } | undefined;
}

export function evolveAlarmAck(state: AlarmAckState, event: FleetEvent, placement: Placement): AlarmAckState {
  return event.type === 'AlarmAcknowledged' ? { lastAck: { position: placement.position, recordedAt: placement.recordedAt } } : state;
}

export function decideAlarmAck(command: AlarmAck, state: AlarmAckState): Decision<FleetEvent, never> {
  if (state.lastAck && state.lastAck.recordedAt >= command.openedAt) return unchanged(state.lastAck.position);
  return record({ type: 'AlarmAcknowledged', data: { alarmId: command.alarmId, ...(command.note !== undefined ? { note: command.note } : {}) } });
}

export const alarmAckDecider: Decider<AlarmAck, FleetEvent, AlarmAckState> = {
  initialState: () => ({ lastAck: undefined }),
  evolve: evolveAlarmAck,
  decide: decideAlarmAck,
};
