/**
 * Firmware that changed between the two ends of a window, per node and component: the running set before (the
 * node's last firmware observation at or before the start) against the set at the end, with the inventory
 * projection's rule (`observeFirmware`: idle slots and absent parts are not running firmware; a version is the same
 * when its normalized form is). A version that changed and changed back within the window is no change. Pure.
 */
import { isEventOf, type RecordedEvent } from '../../events/index.js';
import { emptyInventory, observeFirmware, type FirmwareFact } from '../../projections/index.js';
import type { PositionRange } from './log-reads.js';

export interface FirmwareChange {
  nodeId: string;
  component: string;
  /** Raw versions as the BMC reported them; null: the component was not there. */
  from: string | null;
  to: string | null;
  fromNormalized: string | null;
  toNormalized: string | null;
  /** The observation that first showed the version the window ends with. */
  position: number;
  observedAt: string;
}

function runningFirmware(nodeId: string, event: RecordedEvent): Map<string, FirmwareFact> {
  if (!isEventOf(event, 'FirmwareInventoryObserved')) throw new Error(`event ${event.position} (${event.type}) is not a firmware observation`);
  const at = (event.observedAt ?? event.recordedAt).getTime();
  return observeFirmware(emptyInventory(nodeId), new Map(), event.data, at).firmware;
}

/** `observations`: per node, its FirmwareInventoryObserved events up to the end of the window, in log order. */
export function firmwareChanges(observations: ReadonlyMap<string, readonly RecordedEvent[]>, window: PositionRange): FirmwareChange[] {
  const changes: FirmwareChange[] = [];
  for (const [nodeId, events] of observations) {
    const inWindow = events.filter((event) => event.position > window.after && event.position <= window.through);
    if (inWindow.length === 0) continue;
    const earlier = events.filter((event) => event.position <= window.after);
    const before = earlier.length > 0 ? runningFirmware(nodeId, earlier[earlier.length - 1]!) : new Map<string, FirmwareFact>();
    const sets = inWindow.map((event) => ({ event, firmware: runningFirmware(nodeId, event) }));
    const after = sets[sets.length - 1]!.firmware;
    for (const component of [...new Set([...before.keys(), ...after.keys()])].sort()) {
      const was = before.get(component);
      const is = after.get(component);
      if (was?.normalizedVersion === is?.normalizedVersion) continue;
      // The first observation of the trailing run that shows the final version.
      let reached = sets.length - 1;
      while (reached > 0 && sets[reached - 1]!.firmware.get(component)?.normalizedVersion === is?.normalizedVersion) reached -= 1;
      const event = sets[reached]!.event;
      changes.push({
        nodeId,
        component,
        from: was?.version ?? null,
        to: is?.version ?? null,
        fromNormalized: was?.normalizedVersion ?? null,
        toNormalized: is?.normalizedVersion ?? null,
        position: event.position,
        observedAt: (event.observedAt ?? event.recordedAt).toISOString(),
      });
    }
  }
  return changes.sort((a, b) => a.nodeId.localeCompare(b.nodeId) || a.component.localeCompare(b.component));
}
