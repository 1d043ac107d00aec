/**
 * Declared against observed, per node and per field: the EBOM says what should be there (NodeDeclared), the
 * drivers say what is (NodeInventoryObserved, FirmwareInventoryObserved). Drift is computed, never written over
 * either side. Each field is `match`, `missing` (declared, never seen), `unexpected` (seen, never declared) or
 * `mismatch`, with the time it has been so and, for firmware, the normalization rule that made two spellings
 * equal. Pure: the firmware comparison comes in as a function (the drivers' dialect rules).
 */
import type { EbomRow, FirmwareInventoryObservedData, NodeInventoryObservedData } from '../../events/index.js';

export type DriftKind = 'match' | 'missing' | 'unexpected' | 'mismatch';

export interface DriftField {
  field: string;
  kind: DriftKind;
  declared: string | null;
  observed: string | null;
  /** Why declared and observed are equal (`identical`, `case-insensitive`, a firmware rule pair), or null. */
  rule: string | null;
  since: number;
}

export interface ObservedNode {
  manufacturer: string | null;
  model: string | null;
  serial: string | null;
  gpuCount: number | null;
  gpuModel: string | null;
  memoryGiB: number | null;
  bmcModel: string | null;
  bmcFirmware: string | null;
  biosVersion: string | null;
  dialect: string;
  /** Running firmware by component name: the raw version string. */
  firmware: Record<string, string>;
}

export interface NodeDrift {
  nodeId: string;
  importId: string | null;
  declared: EbomRow | null;
  declaredAt: number | null;
  observed: ObservedNode | null;
  observedAt: number | null;
  fields: Record<string, DriftField>;
}

/** Whether two spellings of a firmware version are the same under a dialect, and which rules said so. */
export type FirmwareComparator = (dialect: string, component: string, declared: string, observed: string) => { equal: boolean; because: string };

export type DriftFact =
  | { kind: 'declared'; at: number; importId: string; declaration: EbomRow }
  | { kind: 'inventory'; at: number; data: NodeInventoryObservedData }
  | { kind: 'firmware'; at: number; data: FirmwareInventoryObservedData };

export function initialDrift(nodeId: string): NodeDrift {
  return { nodeId, importId: null, declared: null, declaredAt: null, observed: null, observedAt: null, fields: {} };
}

function emptyObserved(dialect: string): ObservedNode {
  return { manufacturer: null, model: null, serial: null, gpuCount: null, gpuModel: null, memoryGiB: null, bmcModel: null, bmcFirmware: null, biosVersion: null, dialect, firmware: {} };
}

const idleSlots = new Set(['previous', 'staging', 'golden', 'backup']);

export function evolveDrift(state: NodeDrift, fact: DriftFact, compare: FirmwareComparator): NodeDrift {
  let next: NodeDrift;
  switch (fact.kind) {
    case 'declared':
      next = { ...state, declared: fact.declaration, declaredAt: fact.at, importId: fact.importId };
      break;
    case 'inventory': {
      const d = fact.data;
      const base = state.observed ?? emptyObserved(d.dialect);
      next = {
        ...state,
        observedAt: fact.at,
        observed: {
          ...base,
          dialect: d.dialect,
          manufacturer: d.system.manufacturer ?? base.manufacturer,
          model: d.system.model ?? base.model,
          serial: d.system.serialNumber ?? base.serial,
          gpuCount: d.gpus?.count ?? base.gpuCount,
          gpuModel: d.gpus ? d.gpus.models.join('; ') || null : base.gpuModel,
          memoryGiB: d.memory?.totalGiB ?? base.memoryGiB,
          bmcModel: d.bmc.model ?? base.bmcModel,
          bmcFirmware: d.bmc.firmwareVersion ?? base.bmcFirmware,
          biosVersion: d.biosVersion ?? d.system.biosVersion ?? base.biosVersion,
        },
      };
      break;
    }
    case 'firmware': {
      const firmware: Record<string, string> = {};
      for (const component of fact.data.components) {
        if (component.slot && idleSlots.has(component.slot)) continue;
        if (component.normalizationRule === 'not-present') continue;
        firmware[component.component] = component.version;
      }
      const base = state.observed ?? emptyObserved(fact.data.dialect);
      next = { ...state, observedAt: fact.at, observed: { ...base, dialect: fact.data.dialect, firmware } };
      break;
    }
    default: {
      const unknown: never = fact;
      throw new Error(`unknown drift fact ${JSON.stringify(unknown)}`);
    }
  }
  return { ...next, fields: compareFields(next, state.fields, fact.at, compare) };
}

/** The fields that differ from declared (every kind but `match`). */
export function driftOf(state: NodeDrift): DriftField[] {
  return Object.values(state.fields).filter((field) => field.kind !== 'match');
}

const bmcKey = /^(bmc|idrac|ilo|xcc|openbmc)\b/i;
const biosKey = /^(bios|uefi|system rom|rom)$/i;

function text(value: string | number | null | undefined): string | null {
  return value === null || value === undefined || value === '' ? null : String(value);
}

function compareText(declared: string, observed: string): string | null {
  if (declared === observed) return 'identical';
  if (declared.trim().toLowerCase() === observed.trim().toLowerCase()) return 'case-insensitive';
  if (observed.toLowerCase().includes(declared.trim().toLowerCase())) return 'declared-within-observed';
  return null;
}

/** Finds the observed firmware a baseline key names: the component of that name, or the BMC / BIOS by role. */
function observedFirmware(observed: ObservedNode, key: string): { component: string; version: string } | null {
  const wanted = key.trim().toLowerCase();
  for (const [component, version] of Object.entries(observed.firmware)) {
    if (component.trim().toLowerCase() === wanted) return { component, version };
  }
  if (bmcKey.test(key) && observed.bmcFirmware) return { component: observed.bmcModel ?? key, version: observed.bmcFirmware };
  if (biosKey.test(key) && observed.biosVersion) return { component: 'BIOS', version: observed.biosVersion };
  return null;
}

function compareFields(state: NodeDrift, previous: Record<string, DriftField>, at: number, compare: FirmwareComparator): Record<string, DriftField> {
  const fields: Record<string, DriftField> = {};
  const put = (field: string, kind: DriftKind, declared: string | null, observed: string | null, rule: string | null): void => {
    const before = previous[field];
    // A field keeps its `since` while its kind and values stay the same.
    const same = before && before.kind === kind && before.declared === declared && before.observed === observed;
    fields[field] = { field, kind, declared, observed, rule, since: same ? before.since : at };
  };
  const { declared, observed } = state;
  if (!declared && !observed) return fields;
  if (!declared) {
    put('node', 'unexpected', null, text([observed!.manufacturer, observed!.model].filter(Boolean).join(' ')) ?? 'observed', null);
    return fields;
  }
  if (!observed) {
    put('node', 'missing', declared.serial, null, null);
    return fields;
  }
  put('node', 'match', declared.serial, text(observed.serial), 'declared-and-observed');
  const scalar: Array<[string, string | null, string | null, boolean]> = [
    ['manufacturer', declared.manufacturer, observed.manufacturer, false],
    ['model', declared.model, observed.model, false],
    ['serial', declared.serial, observed.serial, false],
    ['gpuCount', text(declared.gpuCount), text(observed.gpuCount), true],
    ['gpuModel', text(declared.gpuModel), observed.gpuModel, true],
    ['memoryGiB', text(declared.memoryGiB), text(observed.memoryGiB), true],
  ];
  for (const [field, want, have, unexpectedIfUndeclared] of scalar) {
    if (want === null && have === null) continue;
    if (want === null) {
      // Undeclared GPUs or memory are drift (hardware nobody ordered); an absent optional field is not.
      if (unexpectedIfUndeclared && have !== '0') put(field, 'unexpected', null, have, null);
      continue;
    }
    if (have === null) {
      put(field, 'missing', want, null, null);
      continue;
    }
    const rule = field === 'serial' || field === 'gpuCount' || field === 'memoryGiB' ? (want.trim() === have.trim() ? 'identical' : null) : compareText(want, have);
    put(field, rule ? 'match' : 'mismatch', want, have, rule);
  }
  for (const [key, baseline] of Object.entries(declared.firmwareBaseline ?? {})) {
    const field = `firmware:${key}`;
    const found = observedFirmware(observed, key);
    if (!found) {
      put(field, 'missing', baseline, null, null);
      continue;
    }
    const comparison = compare(observed.dialect, found.component, baseline, found.version);
    put(field, comparison.equal ? 'match' : 'mismatch', baseline, found.version, comparison.equal ? comparison.because : null);
  }
  return fields;
}
