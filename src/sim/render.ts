/**
 * Serving a shared capture resource as one BMC: joins the shared pieces with that BMC's own values.
 */
import type { Capture, ResourceTemplate } from './capture.ts';
import { deriveIdentity } from './identity.ts';
import type { SimBmc } from './sim-bmc.ts';

/** The value of capture slot `slot` for `bmc`. */
export function slotValue(capture: Capture, slot: number, bmc: SimBmc, seed: number): string {
  const descriptor = capture.slots[slot];
  if (!descriptor) return '';
  switch (descriptor.kind) {
    case 'link':
      return `"${bmc.linkPrefix}/redfish/v1`;
    case 'firmware':
      return bmc.firmware;
    case 'identity':
      return deriveIdentity(descriptor.token, bmc.index, seed);
    default: {
      const unreachable: never = descriptor;
      return unreachable;
    }
  }
}

/** The body of `template` as `bmc` serves it. */
export function renderResource(template: ResourceTemplate, bmc: SimBmc, seed: number): string {
  if (template.slots.length === 0) return template.parts[0] ?? '';
  let out = template.parts[0] ?? '';
  for (let i = 0; i < template.slots.length; i++) {
    out += slotValue(bmc.capture, template.slots[i] ?? 0, bmc, seed) + (template.parts[i + 1] ?? '');
  }
  return out;
}

/**
 * The stored path a request path names for `bmc`: per-BMC values inside the path (a Dell firmware inventory id
 * holds the firmware version) are turned back into the captured ones.
 */
export function storedPath(path: string, bmc: SimBmc, seed: number): string {
  let out = path;
  for (const slot of bmc.capture.pathSlots) {
    const mine = slotValue(bmc.capture, slot, bmc, seed);
    const descriptor = bmc.capture.slots[slot];
    const captured =
      descriptor?.kind === 'firmware' ? descriptor.original : descriptor?.kind === 'identity' ? descriptor.token.original : undefined;
    if (captured !== undefined && mine !== captured && out.includes(mine)) out = out.split(mine).join(captured);
  }
  return out;
}
