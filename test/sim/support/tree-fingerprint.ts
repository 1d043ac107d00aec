/**
 * What the drivers make of a Redfish tree, reduced to the facts a vendor profile promises to reproduce: the dialect
 * that reads it, which identity fields it yields, the firmware component ids, the sensor layout and the
 * component counts. Values that differ per machine (serials, readings) are left out; their presence is kept.
 */
import { readRedfishNode, type NodeReading } from '../../../src/drivers/index.js';
import type { RedfishTree } from '../../../src/sim/index.js';
import { treeFetch } from './tree-fetch.js';
import type {
  FirmwareInventoryObservedData,
  HealthObservedData,
  NodeInventoryObservedData,
  SensorsObservedData,
} from '../../../events/driver-observations.js';

export interface TreeFingerprint {
  dialect: string;
  systemFields: string[];
  systems: number;
  bmcFields: string[];
  managers: number;
  biosVersion: boolean;
  firmwareIds: string[];
  sensorLayout: { temperatures: number; fans: number; other: number; powerSupplies: number; powerConsumedWatts: boolean };
  cpus: number;
  gpus: number;
  gpuModels: string[];
  memoryModules: number;
  nics: number;
  dpus: number;
  sessionLimitHint: number | null;
  unrecognizedOem: number;
  health: string;
  conditions: number;
  redfishVersion: string | null;
}

/** Reads `tree` with the Redfish driver and reduces the reading to its fingerprint. */
export async function fingerprintTree(tree: RedfishTree): Promise<{ fingerprint: TreeFingerprint; reading: NodeReading }> {
  const reading = await readRedfishNode(treeFetch(tree));
  const data = <T>(type: string): T => reading.observations.find((o) => o.type === type)!.data as T;
  const inventory = data<NodeInventoryObservedData>('NodeInventoryObserved');
  const firmware = data<FirmwareInventoryObservedData>('FirmwareInventoryObserved');
  const sensors = data<SensorsObservedData>('SensorsObserved');
  const health = data<HealthObservedData>('HealthObserved');
  const fieldsOf = (record: object): string[] =>
    Object.entries(record)
      .filter(([key, value]) => key !== 'path' && key !== 'id' && value !== undefined && value !== '')
      .map(([key]) => key)
      .sort();
  return {
    reading,
    fingerprint: {
      dialect: reading.dialect.id,
      systemFields: fieldsOf(inventory.system),
      systems: inventory.systems.length,
      bmcFields: fieldsOf(inventory.bmc),
      managers: inventory.bmcs.length,
      biosVersion: inventory.biosVersion !== undefined,
      firmwareIds: firmware.components.map((component) => component.id).sort(),
      sensorLayout: {
        temperatures: sensors.temperatures.length,
        fans: sensors.fans.length,
        other: sensors.other.length,
        powerSupplies: sensors.powerSupplies.length,
        powerConsumedWatts: sensors.powerConsumedWatts !== undefined,
      },
      cpus: inventory.cpus?.count ?? 0,
      gpus: inventory.gpus?.count ?? 0,
      gpuModels: inventory.gpus?.models ?? [],
      memoryModules: inventory.memory?.moduleCount ?? 0,
      nics: inventory.nics?.count ?? 0,
      dpus: inventory.dpus?.count ?? 0,
      sessionLimitHint: inventory.sessionLimitHint ?? null,
      unrecognizedOem: inventory.unrecognized.length,
      health: health.health,
      conditions: health.conditions.length,
      redfishVersion: inventory.redfishVersion ?? null,
    },
  };
}
