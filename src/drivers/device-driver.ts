/**
 * The one interface every hardware driver implements (Redfish, IPMI, SNMP, the in-band GPU agent).
 *
 * A driver says up front what it can do (`capabilities`), and `observe()` returns normalized observations typed by
 * the event catalogue (`events/driver-observations.ts`). Guarantees every implementation keeps:
 * - `observe()` either resolves with observations or rejects with a `DriverError`; nothing else escapes;
 * - whatever the driver could not interpret is in the observation's `unrecognized`, never dropped and never fatal;
 * - sessions a driver opens are closed before `observe()` settles, unless it was built to reuse them, in which
 *   case `close()` closes them.
 */
import type { DriverObservation, DriverObservationType } from '../../events/index.js';

export interface DriverCapabilities {
  inventory: boolean;
  firmwareInventory: boolean;
  powerState: boolean;
  healthAndSensors: boolean;
  firmwareUpdate: boolean;
  powerControl: boolean;
}

export type PowerAction = 'On' | 'ForceOff' | 'GracefulShutdown' | 'GracefulRestart' | 'ForceRestart' | 'PowerCycle';

export interface ObserveOptions {
  /** Only these observation types (all supported ones when absent). */
  only?: readonly DriverObservationType[];
}

export interface DeviceDriver {
  /** `redfish`, `ipmi`, `snmp` or `agent`. */
  readonly protocol: 'redfish' | 'ipmi' | 'snmp' | 'agent';
  readonly capabilities: DriverCapabilities;
  observe(options?: ObserveOptions): Promise<DriverObservation[]>;
  /** Present only when `capabilities.powerControl`. */
  setPower?(action: PowerAction): Promise<void>;
  /** Releases sessions and connections. Never throws. */
  close(): Promise<void>;
}

export const noCapabilities: DriverCapabilities = {
  inventory: false,
  firmwareInventory: false,
  powerState: false,
  healthAndSensors: false,
  firmwareUpdate: false,
  powerControl: false,
};
