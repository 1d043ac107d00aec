/**
 * Driver observations: what a driver saw on a device, normalized across vendors and protocols.
 *
 * Every payload is node-independent (the poller wraps it with the node id and the envelope's `observedAt`), names
 * the `dialect` it was read with, and keeps whatever the driver could not interpret in `unrecognized` (path and raw
 * value) instead of dropping it. Fields that real vendors omit are optional; a field is never invented.
 */
import { z } from 'zod';
import { defineEvent } from './define-event.js';

/** One value the driver read but could not interpret: where it was, and what it was (bounded in size). */
export const unrecognizedValueSchema = z.strictObject({
  path: z.string().min(1),
  value: z.unknown(),
});

/** A resource the driver tried to read and could not (a member listed by a collection that answered 404, say). */
export const unreadableResourceSchema = z.strictObject({
  path: z.string().min(1),
  code: z.string().min(1),
});

export const observationSourceSchema = z.enum(['redfish', 'ipmi', 'snmp', 'agent']);

const observationBase = {
  source: observationSourceSchema,
  /** Id of the dialect record the device was read with (`generic` when no record matched). */
  dialect: z.string().min(1),
  unrecognized: z.array(unrecognizedValueSchema),
  unreadable: z.array(unreadableResourceSchema).optional(),
  /** Milliseconds the read took; excluded from the content hash. */
  latencyMs: z.number().nonnegative().optional(),
};

export const healthSchema = z.enum(['OK', 'Warning', 'Critical', 'Unknown']);
export const powerStateSchema = z.enum(['On', 'Off', 'PoweringOn', 'PoweringOff', 'Paused', 'Unknown']);

export const systemIdentitySchema = z.strictObject({
  /** Id as the device names it (Redfish `Id`, which may differ from the URL's last segment). */
  id: z.string().optional(),
  path: z.string().optional(),
  manufacturer: z.string().optional(),
  model: z.string().optional(),
  serialNumber: z.string().optional(),
  uuid: z.string().optional(),
  sku: z.string().optional(),
  biosVersion: z.string().optional(),
});

export const bmcIdentitySchema = z.strictObject({
  id: z.string().optional(),
  path: z.string().optional(),
  manufacturer: z.string().optional(),
  model: z.string().optional(),
  firmwareVersion: z.string().optional(),
  uuid: z.string().optional(),
});

export const componentGroupSchema = z.strictObject({
  count: z.number().int().nonnegative(),
  /** Distinct models, sorted. */
  models: z.array(z.string()),
});

export const gpuDeviceSchema = z.strictObject({
  id: z.string(),
  model: z.string().optional(),
  serialNumber: z.string().optional(),
  firmwareVersion: z.string().optional(),
});

export const NodeInventoryObserved = defineEvent({
  family: 'driver-observation',
  type: 'NodeInventoryObserved',
  description: 'The identity and component counts of a node as its management controller reports them.',
  schema: z.strictObject({
    ...observationBase,
    /** The primary system (the host); `systems` lists every system the BMC exposes (GB200: host and HGX baseboard). */
    system: systemIdentitySchema,
    systems: z.array(systemIdentitySchema),
    bmc: bmcIdentitySchema,
    bmcs: z.array(bmcIdentitySchema),
    biosVersion: z.string().optional(),
    // Component counts are absent when the protocol cannot see them (IPMI), never reported as zero.
    cpus: componentGroupSchema.optional(),
    gpus: componentGroupSchema.extend({ devices: z.array(gpuDeviceSchema) }).optional(),
    memory: z.strictObject({ moduleCount: z.number().int().nonnegative(), totalGiB: z.number().nonnegative().optional() }).optional(),
    nics: componentGroupSchema.optional(),
    dpus: componentGroupSchema.optional(),
    /** Lowest positive `MaxConcurrentSessions` a manager advertises: the only session-limit hint BMCs give. */
    sessionLimitHint: z.number().int().positive().optional(),
    redfishVersion: z.string().optional(),
  }),
});

export const firmwareComponentSchema = z.strictObject({
  id: z.string(),
  component: z.string(),
  version: z.string(),
  /** The version after the dialect's normalization rule, and the rule that produced it. */
  normalizedVersion: z.string(),
  normalizationRule: z.string(),
  updateable: z.boolean().optional(),
  /** Dell keeps `Installed-`, `Current-` and `Previous-` entries side by side; others report only what runs. */
  slot: z.enum(['installed', 'current', 'previous', 'staging', 'golden', 'backup']).optional(),
});

export const FirmwareInventoryObserved = defineEvent({
  family: 'driver-observation',
  type: 'FirmwareInventoryObserved',
  description: 'Every firmware component a node reports, with raw and normalized version strings.',
  schema: z.strictObject({
    ...observationBase,
    components: z.array(firmwareComponentSchema),
  }),
});

export const PowerStateObserved = defineEvent({
  family: 'driver-observation',
  type: 'PowerStateObserved',
  description: 'The power state of a node (of its primary system).',
  schema: z.strictObject({
    ...observationBase,
    powerState: powerStateSchema,
  }),
});

export const healthConditionSchema = z.strictObject({
  /** Where the condition was reported (a Redfish path, a sensor name). */
  origin: z.string(),
  health: healthSchema.optional(),
  state: z.string().optional(),
  messageId: z.string().optional(),
  message: z.string().optional(),
  severity: z.string().optional(),
});

export const HealthObserved = defineEvent({
  family: 'driver-observation',
  type: 'HealthObserved',
  description: 'The health rollup of a node and the conditions behind it.',
  schema: z.strictObject({
    ...observationBase,
    health: healthSchema,
    conditions: z.array(healthConditionSchema),
  }),
});

export const sensorReadingSchema = z.strictObject({
  name: z.string(),
  reading: z.number().nullable(),
  unit: z.string(),
  health: healthSchema.optional(),
});

export const powerSupplySchema = z.strictObject({
  name: z.string(),
  health: healthSchema.optional(),
  state: z.string().optional(),
  outputWatts: z.number().nullable().optional(),
  model: z.string().optional(),
  firmwareVersion: z.string().optional(),
});

export const SensorsObserved = defineEvent({
  family: 'driver-observation',
  type: 'SensorsObserved',
  description: 'A summary of temperatures, fans and power supplies, every reading with its unit.',
  schema: z.strictObject({
    ...observationBase,
    temperatures: z.array(sensorReadingSchema),
    fans: z.array(sensorReadingSchema),
    powerSupplies: z.array(powerSupplySchema),
    /** Other readings (voltages, currents, power) that are neither temperatures nor fans. */
    other: z.array(sensorReadingSchema),
    powerConsumedWatts: z.number().nullable().optional(),
  }),
});

export const gpuTelemetrySchema = z.strictObject({
  index: z.number().int().nonnegative(),
  name: z.string().optional(),
  uuid: z.string().optional(),
  serial: z.string().optional(),
  pciBusId: z.string().optional(),
  vbiosVersion: z.string().optional(),
  ecc: z.strictObject({
    correctedVolatile: z.number().int().nonnegative().optional(),
    uncorrectedVolatile: z.number().int().nonnegative().optional(),
    correctedAggregate: z.number().int().nonnegative().optional(),
    uncorrectedAggregate: z.number().int().nonnegative().optional(),
  }),
  retiredPages: z.strictObject({
    singleBit: z.number().int().nonnegative().optional(),
    doubleBit: z.number().int().nonnegative().optional(),
    pending: z.boolean().optional(),
  }),
  remappedRows: z.strictObject({
    correctable: z.number().int().nonnegative().optional(),
    uncorrectable: z.number().int().nonnegative().optional(),
    pending: z.boolean().optional(),
    failure: z.boolean().optional(),
  }),
  /** Active clock event (throttle) reasons, in nvidia-smi's snake_case names (`sw_power_cap`, `hw_slowdown`, ...). */
  throttleReasons: z.array(z.string()),
  temperatureC: z.number().optional(),
  powerDrawW: z.number().optional(),
});

export const GpuTelemetryObserved = defineEvent({
  family: 'driver-observation',
  type: 'GpuTelemetryObserved',
  description: 'In-band GPU health from nvidia-smi: ECC counters, retired and remapped rows, throttle reasons.',
  schema: z.strictObject({
    ...observationBase,
    driverVersion: z.string().optional(),
    gpus: z.array(gpuTelemetrySchema),
  }),
});

export const xidSeveritySchema = z.enum(['info', 'warning', 'critical']);

export const xidEventSchema = z.strictObject({
  xid: z.number().int().nonnegative(),
  pciBusId: z.string(),
  /** The kernel's timestamp prefix as printed (dmesg -T or seconds since boot); never re-interpreted. */
  kernelTimestamp: z.string().optional(),
  pid: z.number().int().optional(),
  processName: z.string().optional(),
  message: z.string(),
  meaning: z.string(),
  severity: xidSeveritySchema,
  recommendedAction: z.string(),
});

export const GpuXidObserved = defineEvent({
  family: 'driver-observation',
  type: 'GpuXidObserved',
  description: 'NVIDIA XID errors found in the kernel log, each with its catalogue meaning and recommended action.',
  schema: z.strictObject({
    ...observationBase,
    events: z.array(xidEventSchema),
  }),
});

export const networkInterfaceSchema = z.strictObject({
  index: z.number().int(),
  name: z.string(),
  adminStatus: z.enum(['up', 'down', 'testing', 'unknown']),
  operStatus: z.enum(['up', 'down', 'testing', 'unknown', 'dormant', 'notPresent', 'lowerLayerDown']),
  speedMbps: z.number().nonnegative().optional(),
});

export const outletSchema = z.strictObject({
  index: z.number().int(),
  name: z.string().optional(),
  state: z.enum(['on', 'off', 'unknown']),
});

export const NetworkDeviceObserved = defineEvent({
  family: 'driver-observation',
  type: 'NetworkDeviceObserved',
  description: 'The identity and port or outlet states of a PDU or switch read over SNMP.',
  schema: z.strictObject({
    ...observationBase,
    sysDescr: z.string().optional(),
    sysObjectId: z.string().optional(),
    sysName: z.string().optional(),
    sysLocation: z.string().optional(),
    sysContact: z.string().optional(),
    uptimeSeconds: z.number().nonnegative().optional(),
    interfaces: z.array(networkInterfaceSchema),
    outlets: z.array(outletSchema),
  }),
});

/**
 * One system event log entry (a `LogEntry` of a `LogService` whose `LogEntryType` is `SEL`, or whose id is `SEL`).
 * `key` is the entry's identity, computed by the driver from the log, the entry's `Id`, `Created` and `MessageId`
 * (never from the name or the text, which some BMCs spell differently in the collection and in the entry): the
 * same entry read twice has the same key, and a log cleared and refilled gives new keys (new `Created`).
 */
export const selEntrySchema = z.strictObject({
  key: z.string().min(1),
  /** The LogService it was read from (`/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel`). */
  log: z.string().min(1),
  id: z.string(),
  /** As the BMC wrote it (its clock, its offset); never re-interpreted. */
  created: z.string().optional(),
  severity: z.string().optional(),
  entryType: z.string().optional(),
  entryCode: z.string().optional(),
  sensorType: z.string().optional(),
  sensorNumber: z.number().int().optional(),
  messageId: z.string().optional(),
  message: z.string().optional(),
});

export const SelEntriesObserved = defineEvent({
  family: 'driver-observation',
  type: 'SelEntriesObserved',
  description: 'System event log (SEL) entries a BMC holds that no earlier observation of the node recorded.',
  schema: z.strictObject({
    ...observationBase,
    /** Every SEL LogService read, entries or not. */
    logs: z.array(z.string()),
    /**
     * As a driver returns it: every entry read (at most a bounded number per log). As appended to a node's stream:
     * only the entries that were not in the previous read of the node (`changedObservations`).
     */
    entries: z.array(selEntrySchema),
  }),
});

export const driverObservationEvents = [
  NodeInventoryObserved,
  FirmwareInventoryObserved,
  PowerStateObserved,
  HealthObserved,
  SensorsObserved,
  GpuTelemetryObserved,
  GpuXidObserved,
  NetworkDeviceObserved,
  SelEntriesObserved,
] as const;

export type NodeInventoryObservedData = z.infer<typeof NodeInventoryObserved.schema>;
export type FirmwareInventoryObservedData = z.infer<typeof FirmwareInventoryObserved.schema>;
export type PowerStateObservedData = z.infer<typeof PowerStateObserved.schema>;
export type HealthObservedData = z.infer<typeof HealthObserved.schema>;
export type SensorsObservedData = z.infer<typeof SensorsObserved.schema>;
export type GpuTelemetryObservedData = z.infer<typeof GpuTelemetryObserved.schema>;
export type GpuXidObservedData = z.infer<typeof GpuXidObserved.schema>;
export type NetworkDeviceObservedData = z.infer<typeof NetworkDeviceObserved.schema>;
export type SelEntriesObservedData = z.infer<typeof SelEntriesObserved.schema>;
export type SelEntry = z.infer<typeof selEntrySchema>;
export type UnrecognizedValue = z.infer<typeof unrecognizedValueSchema>;
export type Health = z.infer<typeof healthSchema>;
export type PowerState = z.infer<typeof powerStateSchema>;
export type SensorReading = z.infer<typeof sensorReadingSchema>;
export type XidEvent = z.infer<typeof xidEventSchema>;
export type GpuTelemetry = z.infer<typeof gpuTelemetrySchema>;

/** The type name of every driver observation event. */
export type DriverObservationType = (typeof driverObservationEvents)[number]['type'];

/** One observation as a driver returns it: the event type and its payload, before the poller adds the node. */
export type DriverObservation =
  | { type: 'NodeInventoryObserved'; data: NodeInventoryObservedData }
  | { type: 'FirmwareInventoryObserved'; data: FirmwareInventoryObservedData }
  | { type: 'PowerStateObserved'; data: PowerStateObservedData }
  | { type: 'HealthObserved'; data: HealthObservedData }
  | { type: 'SensorsObserved'; data: SensorsObservedData }
  | { type: 'GpuTelemetryObserved'; data: GpuTelemetryObservedData }
  | { type: 'GpuXidObserved'; data: GpuXidObservedData }
  | { type: 'NetworkDeviceObserved'; data: NetworkDeviceObservedData }
  | { type: 'SelEntriesObserved'; data: SelEntriesObservedData };
export type GpuDevice = z.infer<typeof gpuDeviceSchema>;
export type SystemIdentity = z.infer<typeof systemIdentitySchema>;
export type BmcIdentity = z.infer<typeof bmcIdentitySchema>;
