/**
 * One node's push as its stream records it: whether a stream is held or the node is polled after a gap, since when,
 * the heartbeat announced, and every push gap with since when. A pure fold over the node's `PushStreamOpened` and
 * `PushGapOpened` events in log order (`docs/push.md`).
 */
import { assertNever, pushEvents, type EventsOf, type PushGapKind } from '../../events/index.js';

/** The push events of a node's stream (what the fold reads; `RedfishEventObserved` counts the events pushed). */
export type NodePushEvent = EventsOf<typeof pushEvents>;

export interface NodePushGap {
  kind: PushGapKind;
  since: string;
  detectedAt: string;
  detail: string;
}

export interface NodePushState {
  /** `streaming`: a stream held and trusted; `polled`: after a gap, until it is re-created; `never`: no stream recorded. */
  status: 'never' | 'streaming' | 'polled';
  /** Since when it has been so. */
  since: string | null;
  heartbeatMs: number | null;
  streamsOpened: number;
  eventsPushed: number;
  gaps: NodePushGap[];
}

export const initialNodePushState: NodePushState = { status: 'never', since: null, heartbeatMs: null, streamsOpened: 0, eventsPushed: 0, gaps: [] };

export function evolveNodePushState(state: NodePushState, event: NodePushEvent): NodePushState {
  switch (event.type) {
    case 'PushStreamOpened':
      return { ...state, status: 'streaming', since: event.data.at, heartbeatMs: event.data.heartbeatMs, streamsOpened: state.streamsOpened + 1 };
    case 'PushGapOpened': {
      const { kind, since, detectedAt, detail } = event.data;
      return { ...state, status: 'polled', since: detectedAt, gaps: [...state.gaps, { kind, since, detectedAt, detail }] };
    }
    case 'RedfishEventObserved':
      return event.data.origin === 'pushed' ? { ...state, eventsPushed: state.eventsPushed + 1 } : state;
    default:
      return assertNever(event);
  }
}

export function nodePushState(events: Iterable<NodePushEvent>): NodePushState {
  let state = initialNodePushState;
  for (const event of events) state = evolveNodePushState(state, event);
  return state;
}
