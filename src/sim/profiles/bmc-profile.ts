/**
 * A vendor profile: the facts of one vendor's and generation's Redfish tree, written by us as plain data from what
 * real controllers of that model serve (ids and URL patterns, which resources exist and which do not, the OEM
 * namespaces present, version string formats and firmware inventory entries, the sensor layout, the session
 * collection and its limit, the shape of its error bodies, response times). `generateTree` turns a profile into a
 * full Redfish tree; the simulator serves one such tree to every BMC built from the profile, with per-BMC identity
 * and firmware laid over it.
 *
 * Repeated parts (`count` > 1) carry `{n}` in any string, replaced by the part's number (from `from`, default 1):
 * `{ id: 'CPU.Socket.{n}', count: 2 }` is `CPU.Socket.1` and `CPU.Socket.2`. `{bmc}` in a string is the BMC
 * firmware version, so ids and versions that embed it follow the firmware drawn for each BMC.
 *
 * Pure data: no I/O, nothing read from outside the repository. Each profile is held against the real capture of
 * its model by `test/sim/profile-fidelity.test.ts` where captures are available (`FLEET_LEDGER_FIXTURES`).
 */
import type { ErrorReply, FirmwareRevision, SlowResource, VendorFamily } from '../vendor-profile.ts';

export type Health = 'OK' | 'Warning' | 'Critical';

/** A part that may repeat: `count` copies numbered from `from` (default 1), `{n}` replaced in every string. */
export interface Repeated {
  count?: number;
  from?: number;
}

export interface StatusSpec {
  state?: 'Enabled' | 'Disabled' | 'Absent' | 'StandbyOffline' | 'Starting' | 'UnavailableOffline';
  health?: Health;
  healthRollup?: Health;
  /** Older iDRAC and iLO spell it `HealthRollUp`. */
  rollupSpelling?: 'HealthRollup' | 'HealthRollUp';
  /** Status omitted entirely (some Supermicro components). */
  omit?: boolean;
  /** `Status.Conditions` (NVIDIA OpenBMC): the messages behind a health state. */
  conditions?: Array<{ MessageId: string; Message?: string; Severity?: Health; MessageArgs?: string[] }>;
}

export interface ProcessorSpec extends Repeated {
  id: string;
  type: 'CPU' | 'GPU' | 'FPGA' | 'Accelerator';
  name?: string;
  manufacturer?: string;
  /** Absent on some GPU processors (GB200): the model is then only on the PCIe device. */
  model?: string;
  cores?: number;
  threads?: number;
  maxSpeedMHz?: number;
  serialNumber?: string;
  firmwareVersion?: string;
  status?: StatusSpec;
}

export interface MemorySpec extends Repeated {
  id: string;
  capacityMiB: number;
  memoryDeviceType?: string;
  manufacturer?: string;
  partNumber?: string;
  serialNumber?: string;
  speedMHz?: number;
  status?: StatusSpec;
}

export interface EthernetSpec extends Repeated {
  id: string;
  /** MAC address as the vendor writes it (case, separator); a repeated part adds `n - from` to the last byte. */
  mac: string;
}

/** One system event log entry, as the BMC lists it expanded in the `Entries` collection. */
export interface LogEntrySpec {
  id: string;
  /** As the BMC writes it, offset included (`2022-03-09T20:02:22+00:00`). */
  created: string;
  severity: Health;
  entryType?: 'SEL' | 'Event' | 'Oem';
  entryCode?: 'Assert' | 'Deassert';
  sensorType?: string;
  sensorNumber?: number;
  messageId: string;
  message: string;
}

/**
 * A `LogService` under a system, manager or chassis. `logEntryType` is written only when given (older schemas,
 * OpenBMC and Intel leave it out, and a SEL is then recognised by its id `SEL`).
 */
export interface LogServiceSpec {
  id: string;
  logEntryType?: 'SEL' | 'Event' | 'OEM' | 'Multiple';
  maxRecords?: number;
  entries: LogEntrySpec[];
}

export interface SystemSpec {
  id: string;
  name?: string;
  manufacturer?: string;
  model?: string;
  sku?: string;
  serialNumber?: string;
  /** A UUID in the vendor's own style, or true for one derived from the profile name and resource path. */
  uuid?: boolean | string;
  biosVersion?: string;
  hostName?: string;
  systemType?: string;
  powerState?: 'On' | 'Off';
  status?: StatusSpec;
  /** `ProcessorSummary` (count and model) written next to the Processors collection. */
  processorSummary?: { count: number; model?: string };
  memoryGiB?: number;
  processors?: ProcessorSpec[];
  memory?: MemorySpec[];
  ethernet?: EthernetSpec[];
  /** Chassis and managers this system links to, by id. */
  chassis?: string[];
  managedBy?: string[];
  logServices?: LogServiceSpec[];
  oem?: Record<string, unknown>;
}

export interface ManagerSpec {
  id: string;
  name?: string;
  managerType: 'BMC' | 'EnclosureManager' | 'ManagementController' | 'AuxiliaryController' | 'Service';
  model?: string;
  manufacturer?: string;
  /** `Manager.FirmwareVersion` with `{bmc}` for the version core: `iLO 5 v{bmc}`. Omitted when undefined. */
  firmwareDisplay?: string;
  uuid?: boolean | string;
  status?: StatusSpec;
  /** `MaxConcurrentSessions` per console service: the only session-limit hints real BMCs give. */
  consoles?: Partial<Record<'CommandShell' | 'GraphicalConsole' | 'SerialConsole', number>>;
  ethernet?: EthernetSpec[];
  hostName?: string;
  managerForServers?: string[];
  managerForChassis?: string[];
  logServices?: LogServiceSpec[];
  oem?: Record<string, unknown>;
}

export type SensorReadingType =
  | 'Temperature' | 'Rotational' | 'Power' | 'Voltage' | 'Current' | 'EnergyJoules' | 'EnergykWh' | 'Percent' | 'Frequency'
  | 'Humidity' | 'AirFlow' | 'LiquidFlow' | 'Pressure' | 'Altitude';

export interface SensorSpec extends Repeated {
  id: string;
  name: string;
  type: SensorReadingType;
  reading: number | null;
  units?: string;
  status?: StatusSpec;
}

export interface LegacyTemperatureSpec extends Repeated {
  name: string;
  celsius: number | null;
  upperCritical?: number | null;
  status?: StatusSpec;
}

export interface LegacyFanSpec extends Repeated {
  name: string;
  reading: number | null;
  units: 'RPM' | 'Percent';
  /** iLO writes `FanName` where others write `Name`. */
  nameKey?: 'Name' | 'FanName';
  status?: StatusSpec;
}

export interface PowerSupplySpec extends Repeated {
  id: string;
  name: string;
  model?: string;
  manufacturer?: string;
  serialNumber?: string;
  firmwareVersion?: string;
  capacityWatts?: number;
  outputWatts?: number;
  status?: StatusSpec;
}

export interface AdapterSpec extends Repeated {
  id: string;
  name?: string;
  manufacturer?: string;
  model?: string;
  serialNumber?: string;
  partNumber?: string;
  firmwareVersion?: string;
  status?: StatusSpec;
}

export interface PcieDeviceSpec extends Repeated {
  id: string;
  name?: string;
  deviceType?: string;
  manufacturer?: string;
  model?: string;
  partNumber?: string;
  serialNumber?: string;
  firmwareVersion?: string;
  status?: StatusSpec;
}

/**
 * Where a chassis reports its sensors. `legacy`: `Thermal` (Temperatures, Fans) and `Power` (PowerControl,
 * PowerSupplies) resources; `sensors`: a `Sensors` collection of Sensor resources; `EnvironmentMetrics`,
 * `PowerSubsystem` and `ThermalSubsystem` are written when their parts are given.
 */
export interface ChassisSensorsSpec {
  thermal?: { temperatures: LegacyTemperatureSpec[]; fans: LegacyFanSpec[] };
  power?: { consumedWatts?: number; supplies: PowerSupplySpec[] };
  sensors?: SensorSpec[];
  environmentMetrics?: { powerWatts?: number; temperatureCelsius?: number };
  powerSubsystem?: { capacityWatts?: number; supplies: PowerSupplySpec[] };
  thermalSubsystem?: { fans: Array<Repeated & { id: string; name: string; reading: number; units: 'RPM' | 'Percent' }> };
}

export interface ChassisSpec {
  id: string;
  name?: string;
  chassisType: string;
  manufacturer?: string;
  model?: string;
  serialNumber?: string;
  partNumber?: string;
  sku?: string;
  uuid?: boolean | string;
  powerState?: 'On' | 'Off';
  status?: StatusSpec;
  computerSystems?: string[];
  managedBy?: string[];
  sensors?: ChassisSensorsSpec;
  networkAdapters?: AdapterSpec[];
  pcieDevices?: PcieDeviceSpec[];
  logServices?: LogServiceSpec[];
  oem?: Record<string, unknown>;
}

export interface FirmwareEntrySpec extends Repeated {
  id: string;
  name?: string;
  /** The version string exactly as the vendor formats it; `{bmc}` for the BMC firmware version. */
  version: string;
  updateable?: boolean;
  softwareId?: string;
  status?: StatusSpec;
}

export interface BmcProfile {
  /** The name scenarios and `--mockup` use (`dell`, `hpe`, ...). */
  name: string;
  family: VendorFamily;
  /** What is simulated, for people: `Dell PowerEdge R750, iDRAC9`. */
  title: string;
  redfishVersion: string;
  /** Whether resources carry `@odata.context` (Supermicro and NVIDIA OpenBMC do not). */
  odataContext: boolean;
  /** HPE writes `@odata.id` with a trailing slash. */
  trailingSlash?: boolean;
  serviceRoot: {
    vendor?: string;
    product?: string;
    uuid?: boolean | string;
    oem?: Record<string, unknown>;
    /**
     * `ProtocolFeaturesSupported.ExpandQuery` as the capture's root announces it; absent on models whose root has
     * none (Redfish 1.0 era). With `NoLinks`, the simulated BMC answers `$expand` on collections.
     */
    expandQuery?: { ExpandAll: boolean; Levels: boolean; Links: boolean; NoLinks: boolean; MaxLevels?: number };
  };
  /** The BMC firmware: the revision written into the tree, and the revisions a fleet of them holds. */
  bmcFirmware: { version: string; mix: FirmwareRevision[] };
  systems: SystemSpec[];
  managers: ManagerSpec[];
  chassis: ChassisSpec[];
  firmwareInventory: {
    /** `FirmwareInventory` (standard) or `SoftwareInventory` (some Intel BMCs). */
    collection?: 'FirmwareInventory' | 'SoftwareInventory';
    entries: FirmwareEntrySpec[];
  };
  updateService: {
    simpleUpdate: boolean;
    httpPushUri?: boolean;
    multipartHttpPushUri?: boolean;
    transferProtocols?: string[];
    /** Where SimpleUpdate is posted when not the standard `.../UpdateService.SimpleUpdate` (AMI: `.../Actions/SimpleUpdate`). */
    simpleUpdateTarget?: string;
    /** Redfish 1.0 services (iDRAC 8, iLO 4) have no UpdateService at all: nothing is written and the root has no link. */
    absent?: boolean;
  };
  sessions: {
    /** Concurrent sessions (Redfish sessions plus in-flight basic-auth requests) served before rejecting. */
    limit: number;
    /** `SessionService.SessionTimeout`, seconds. */
    timeoutS: number;
  };
  /** The answer when the session table is full, and to a request without valid credentials. */
  errors: { sessionLimit: ErrorReply; unauthorized: ErrorReply };
  /** Response times of this model, milliseconds (as measured on real controllers of it). */
  latency: { averageMs: number; minimumMs: number; maximumMs: number; slowestPath?: string };
  slowResources?: SlowResource[];
  /**
   * Vendor oddities the structured fields above do not express, by canonical path: an object is merged over the
   * generated resource (a key set to null is removed) or added as a new resource; null removes the resource.
   * `{n}` is not expanded here; `{bmc}` is.
   */
  overrides?: Record<string, Record<string, unknown> | null>;
  /**
   * The real capture this profile is held against, relative to `FLEET_LEDGER_FIXTURES` (`redfish/dell`): the
   * fidelity test reads both with the same driver and requires the same dialect, identity fields, firmware
   * component ids and sensor layout.
   */
  heldAgainst?: string;
  /**
   * `single-resources` when the capture holds only single resources (`redfish-partial/`: service root, System, one
   * Processor, Manager, Chassis Power and Thermal, no collections): the fidelity test then compares only what those
   * show (dialect, identity and BMC fields, BIOS version, system and manager counts, session-limit hint, health,
   * Redfish version). Default `full`.
   */
  captureHolds?: 'full' | 'single-resources';
  /**
   * False for a profile that joins a fleet only when named (`--mockup hpe_ilo4_bl460c_gen9`, a scenario's mix): a
   * fleet that names no profile (`--bmcs N` alone) keeps the composition its tests and benchmarks were measured
   * with. Older generations without an UpdateService would otherwise fail every rollout that lands on them.
   * Default true.
   */
  inDefaultFleet?: boolean;
}
