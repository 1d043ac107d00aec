/**
 * The per-site capacity stream (`capacity-<site>`) folded into the slots held now. Every saga of the site appends
 * here with the expected version it read, so two writers can never both take the last slot. A slot is also the
 * node's single-owner lease: a node holds at most one slot, whichever saga holds it.
 *
 * `evolveCapacity` updates the state in place (a site holds tens of thousands of acquire/release pairs) and returns it.
 */
import { assertNever, isCapacityStreamEvent, type DataOf } from '../../events/index.js';
import type { SagaEvent } from '../saga-event.js';

export type Slot = DataOf<'SlotAcquired'>;

export interface CapacityState {
  site: string;
  /** The stream version this state reflects (0: no events). The next append expects exactly this. */
  version: number;
  /** The site-wide cap shared by every saga; undefined until someone sets it (each saga's own cap still holds). */
  siteCap: number | undefined;
  slots: Map<string, Slot>;
  slotByNode: Map<string, string>;
}

export function initialCapacity(site: string): CapacityState {
  return { site, version: 0, siteCap: undefined, slots: new Map(), slotByNode: new Map() };
}

export function capacityStream(site: string): string {
  return `capacity-${site}`;
}

export function evolveCapacity(state: CapacityState, event: SagaEvent): CapacityState {
  state.version += 1;
  // Events of other types in the stream count toward its version only.
  if (!isCapacityStreamEvent(event)) return state;
  switch (event.type) {
    case 'SiteCapSet':
      state.siteCap = event.data.cap;
      break;
    case 'SlotAcquired': {
      const slot = event.data;
      state.slots.set(slot.slotId, slot);
      state.slotByNode.set(slot.nodeId, slot.slotId);
      break;
    }
    case 'SlotReleased': {
      const released = event.data;
      const slot = state.slots.get(released.slotId);
      state.slots.delete(released.slotId);
      if (slot && state.slotByNode.get(slot.nodeId) === released.slotId) state.slotByNode.delete(slot.nodeId);
      break;
    }
    default:
      return assertNever(event);
  }
  return state;
}

/** Slots held by one saga. */
export function slotsOf(state: CapacityState, sagaId: string): Slot[] {
  return [...state.slots.values()].filter((slot) => slot.sagaId === sagaId);
}
