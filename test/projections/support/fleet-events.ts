/** Builders for the events projection tests append, in the fleet's words. */
import type { EbomRow, ProposedEvent } from '../../../events/index.js';

export const operator = { kind: 'operator', id: 'alice@example.org' } as const;
export const poller = { kind: 'system', id: 'poller' } as const;
export const driver = { kind: 'driver', id: 'redfish' } as const;

export const T0 = Date.parse('2026-03-01T00:00:00.000Z');
export const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();

export function registered(nodeId: string, rack: string, options: { site?: string; expectedIntervalS?: number } = {}): ProposedEvent {
  return {
    type: 'NodeRegistered',
    data: {
      nodeId,
      site: options.site ?? 'dc1',
      rack,
      bmc: { protocol: 'redfish', address: `https://${nodeId}.bmc`, credentialRef: 'bmc-default' },
      ...(options.expectedIntervalS ? { expectedIntervalS: options.expectedIntervalS } : {}),
    },
    actor: operator,
  };
}

export type Outcome = 'success' | 'not-modified' | 'timeout' | 'refused' | 'latched' | 'auth';

/** One scheduler flush: every listed node polled at `seconds` (plus a small offset each). */
export function polls(seconds: number, outcomes: ReadonlyArray<readonly [string, Outcome]>, site = 'dc1'): ProposedEvent {
  return {
    type: 'PollOutcomesRecorded',
    data: {
      site,
      windowStart: at(seconds),
      nodeIds: outcomes.map(([nodeId]) => nodeId),
      work: outcomes.map(() => 'liveness'),
      outcomes: outcomes.map(([, outcome]) => outcome),
      latencyMs: outcomes.map(() => 12),
      offsetMs: outcomes.map((_, i) => i),
    },
    actor: poller,
  };
}

export function topology(rack: string, pdu: string[], tor: string[] = [], cdu?: string, site = 'dc1'): ProposedEvent {
  return { type: 'TopologyDeclared', data: { site, rack, pdu, tor, ...(cdu ? { cdu } : {}) }, actor: operator };
}

export function declared(row: Partial<EbomRow> & { nodeId: string }, importId = 'imp-1'): ProposedEvent {
  return {
    type: 'NodeDeclared',
    data: {
      importId,
      declaration: { site: 'dc1', rack: 'r1', manufacturer: 'HPE', model: 'ProLiant DL380 Gen10 Plus', serial: `SN-${row.nodeId}`, firmwareBaseline: {}, ...row },
    },
    actor: operator,
  };
}

export interface InventoryFacts {
  manufacturer?: string;
  model?: string;
  serial?: string;
  bmcModel?: string;
  bmcFirmware?: string;
  bios?: string;
  gpus?: { count: number; models: string[] };
  dialect?: string;
}

export function inventory(facts: InventoryFacts, seconds = 0): ProposedEvent {
  return {
    type: 'NodeInventoryObserved',
    observedAt: at(seconds),
    data: {
      source: 'redfish',
      dialect: facts.dialect ?? 'hpe-ilo5',
      unrecognized: [],
      system: { manufacturer: facts.manufacturer, model: facts.model, serialNumber: facts.serial, biosVersion: facts.bios },
      systems: [],
      bmc: { model: facts.bmcModel, firmwareVersion: facts.bmcFirmware },
      bmcs: [],
      ...(facts.bios ? { biosVersion: facts.bios } : {}),
      ...(facts.gpus ? { gpus: { ...facts.gpus, devices: [] } } : {}),
    },
    actor: driver,
  };
}

export function firmware(components: Array<{ component: string; version: string; normalized?: string; rule?: string; updateable?: boolean }>, options: { dialect?: string; seconds?: number } = {}): ProposedEvent {
  return {
    type: 'FirmwareInventoryObserved',
    observedAt: at(options.seconds ?? 0),
    data: {
      source: 'redfish',
      dialect: options.dialect ?? 'hpe-ilo5',
      unrecognized: [],
      components: components.map((c, i) => ({
        id: String(i + 1),
        component: c.component,
        version: c.version,
        normalizedVersion: c.normalized ?? c.version,
        normalizationRule: c.rule ?? 'identity',
        ...(c.updateable !== undefined ? { updateable: c.updateable } : {}),
      })),
    },
    actor: driver,
  };
}

export function maintenance(nodeId: string, fromS: number, untilS: number): ProposedEvent {
  return { type: 'MaintenanceWindowSet', data: { nodeId, from: at(fromS), until: at(untilS), reason: 'PSU swap' }, actor: operator };
}

export function decommissioned(nodeId: string): ProposedEvent {
  return { type: 'NodeDecommissioned', data: { nodeId, reason: 'end of life' }, actor: operator };
}

export function acknowledged(alarmId: string, by: string = operator.id, note?: string): ProposedEvent {
  return { type: 'AlarmAcknowledged', data: { alarmId, ...(note ? { note } : {}) }, actor: { kind: 'operator', id: by } };
}

export function xid(code: number, severity: 'info' | 'warning' | 'critical', seconds = 0): ProposedEvent {
  return {
    type: 'GpuXidObserved',
    observedAt: at(seconds),
    data: {
      source: 'agent',
      dialect: 'nvidia-smi',
      unrecognized: [],
      events: [{ xid: code, pciBusId: '0000:3b:00', message: `NVRM: Xid (PCI:0000:3b:00): ${code}, pid=1`, meaning: 'test', severity, recommendedAction: 'reset' }],
    },
    actor: driver,
  };
}

export function gpuTelemetry(uncorrected: number, seconds = 0): ProposedEvent {
  return {
    type: 'GpuTelemetryObserved',
    observedAt: at(seconds),
    data: {
      source: 'agent',
      dialect: 'nvidia-smi',
      unrecognized: [],
      gpus: [{ index: 0, ecc: { uncorrectedVolatile: uncorrected }, retiredPages: {}, remappedRows: {}, throttleReasons: [] }],
    },
    actor: driver,
  };
}
