/**
 * Parsers for `ipmitool` text output: `sdr` / `sdr elist` sensor tables, `dcmi power reading`, `mc info`,
 * `fru print` and `chassis status`. Pure functions of the text; lines they cannot read are returned as
 * `unrecognized` (ipmitool interleaves errors such as `Unable to send command: Invalid argument` with data,
 * see `ipmi/v1Data_0_line589.txt`).
 */
import type { Health, SensorReading, UnrecognizedValue } from '../../../events/index.js';
import { presentText, type PlaceholderKind } from '../placeholder.js';
import { storableText } from '../storable-text.js';
import { canonicalVendor } from '../vendor-name.js';

export interface IpmiSensor {
  name: string;
  reading: number | null;
  unit: string;
  /** ipmitool's status column: ok, nc (non-critical), cr (critical), nr (non-recoverable), ns (no reading). */
  status: string;
  health?: Health;
  /** Discrete state text (`Presence detected`, `Connected`), when the sensor has one. */
  state?: string;
  /** Sensor number (`30h`) and entity (`7.1`), present in `sdr elist` only. */
  sensorId?: string;
  entity?: string;
}

const UNITS: Array<[RegExp, string]> = [
  [/^degrees C$/i, 'Cel'],
  [/^degrees F$/i, 'F'],
  [/^RPM$/i, 'RPM'],
  [/^Volts$/i, 'V'],
  [/^Watts$/i, 'W'],
  [/^Amps$/i, 'A'],
  [/^percent$/i, '%'],
  [/^feet$/i, 'ft'],
  [/^CFM$/i, 'CFM'],
];

function healthOf(status: string): Health | undefined {
  switch (status.toLowerCase()) {
    case 'ok':
      return 'OK';
    case 'nc':
      return 'Warning';
    case 'cr':
    case 'nr':
      return 'Critical';
    default:
      return undefined;
  }
}

/** `20 degrees C` -> 20 Cel; `110 Watts, Presence detected` -> 110 W + state; `0x00` or `Connected` -> discrete. */
function parseReading(text: string): { reading: number | null; unit: string; state?: string } {
  const [first = '', ...rest] = text.split(',').map((part) => part.trim());
  const analog = /^(-?\d+(?:\.\d+)?)\s+(.+)$/.exec(first);
  if (analog) {
    const unitText = analog[2]!.trim();
    const unit = UNITS.find(([pattern]) => pattern.test(unitText))?.[1] ?? unitText;
    // A run of digits too long for a double (a damaged line) is Infinity: no reading, never a number JSON cannot say.
    const value = Number(analog[1]);
    return { reading: Number.isFinite(value) ? value : null, unit, ...(rest.length > 0 ? { state: rest.join(', ') } : {}) };
  }
  if (first === '' || /^(no reading|not readable|disabled)$/i.test(first)) return { reading: null, unit: 'none' };
  return { reading: null, unit: 'discrete', state: text.trim() };
}

/** Parses `ipmitool sdr` (3 columns) and `ipmitool sdr elist` (5 columns) output. */
export function parseSdr(raw: string): { sensors: IpmiSensor[]; unrecognized: UnrecognizedValue[] } {
  const text = storableText(raw);
  const sensors: IpmiSensor[] = [];
  const unrecognized: UnrecognizedValue[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    const columns = line.split('|').map((column) => column.trim());
    let sensor: IpmiSensor | undefined;
    if (columns.length === 3) {
      const [name = '', reading = '', status = ''] = columns;
      sensor = { name, status, ...parseReading(reading) };
    } else if (columns.length === 5) {
      const [name = '', sensorId = '', status = '', entity = '', reading = ''] = columns;
      sensor = { name, status, sensorId, entity, ...parseReading(reading) };
    }
    if (!sensor || sensor.name === '') {
      unrecognized.push({ path: `sdr/line/${index + 1}`, value: line.slice(0, 500) });
      return;
    }
    const health = healthOf(sensor.status);
    if (health) sensor.health = health;
    sensors.push(sensor);
  });
  return { sensors, unrecognized };
}

/** Splits sensors into the summary's groups: temperatures, fans, power supplies, other readings. */
export function summarizeSensors(sensors: readonly IpmiSensor[]): {
  temperatures: SensorReading[];
  fans: SensorReading[];
  powerSupplies: Array<{ name: string; health?: Health; state?: string; outputWatts?: number | null }>;
  other: SensorReading[];
} {
  const temperatures: SensorReading[] = [];
  const fans: SensorReading[] = [];
  const other: SensorReading[] = [];
  const powerSupplies: Array<{ name: string; health?: Health; state?: string; outputWatts?: number | null }> = [];
  for (const sensor of sensors) {
    const reading: SensorReading = { name: sensor.name, reading: sensor.reading, unit: sensor.unit, ...(sensor.health ? { health: sensor.health } : {}) };
    if (/^(Power Supply|PSU|PS)\s*\d+( Status)?$/i.test(sensor.name)) {
      powerSupplies.push({
        name: sensor.name,
        ...(sensor.health ? { health: sensor.health } : {}),
        ...(sensor.state ? { state: sensor.state } : {}),
        ...(sensor.unit === 'W' ? { outputWatts: sensor.reading } : {}),
      });
    } else if (sensor.unit === 'Cel') temperatures.push(reading);
    else if (sensor.unit === 'RPM' || (/fan/i.test(sensor.name) && sensor.unit === '%')) fans.push(reading);
    else if (sensor.reading !== null) other.push(reading);
  }
  return { temperatures, fans, powerSupplies, other };
}

export interface DcmiPowerReading {
  instantaneousWatts?: number;
  minimumWatts?: number;
  maximumWatts?: number;
  averageWatts?: number;
  samplingPeriodSeconds?: number;
  state?: string;
}

/** Parses `ipmitool dcmi power reading`. */
export function parseDcmiPowerReading(raw: string): DcmiPowerReading {
  const text = storableText(raw);
  const result: DcmiPowerReading = {};
  const watts = (pattern: RegExp): number | undefined => {
    const match = pattern.exec(text);
    return match ? Number(match[1]) : undefined;
  };
  const set = (key: keyof DcmiPowerReading, value: number | undefined): void => {
    if (value !== undefined && Number.isFinite(value)) (result as Record<string, unknown>)[key] = value;
  };
  set('instantaneousWatts', watts(/Instantaneous power reading:\s*(\d+(?:\.\d+)?)\s*Watts/i));
  set('minimumWatts', watts(/Minimum during sampling period:\s*(\d+(?:\.\d+)?)\s*Watts/i));
  set('maximumWatts', watts(/Maximum during sampling period:\s*(\d+(?:\.\d+)?)\s*Watts/i));
  set('averageWatts', watts(/Average power reading over sample period:\s*(\d+(?:\.\d+)?)\s*Watts/i));
  set('samplingPeriodSeconds', watts(/Sampling period:\s*(\d+)\s*Seconds/i));
  const state = /Power reading state is:\s*(\S+)/i.exec(text)?.[1];
  if (state) result.state = state;
  return result;
}

/** `Key : Value` lines into a map (first occurrence wins; continuation lines are ignored). */
export function parseKeyValues(raw: string): Map<string, string> {
  const text = storableText(raw);
  const values = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const separator = line.indexOf(':');
    if (separator <= 0) continue;
    const key = line.slice(0, separator).trim();
    const value = line.slice(separator + 1).trim();
    if (key && !values.has(key)) values.set(key, value);
  }
  return values;
}

export interface McInfo {
  deviceId?: string;
  firmwareRevision?: string;
  ipmiVersion?: string;
  manufacturerId?: string;
  manufacturerName?: string;
  productId?: string;
  productName?: string;
}

/** Parses `ipmitool mc info`. */
export function parseMcInfo(raw: string): McInfo {
  const text = storableText(raw);
  const values = parseKeyValues(text);
  const info: McInfo = {};
  const pick = (key: keyof McInfo, name: string): void => {
    const value = presentText(values.get(name));
    if (value) info[key] = value;
  };
  pick('deviceId', 'Device ID');
  pick('firmwareRevision', 'Firmware Revision');
  pick('ipmiVersion', 'IPMI Version');
  pick('manufacturerId', 'Manufacturer ID');
  pick('manufacturerName', 'Manufacturer Name');
  pick('productId', 'Product ID');
  pick('productName', 'Product Name');
  return info;
}

export interface FruIdentity {
  manufacturer?: string;
  model?: string;
  serialNumber?: string;
  partNumber?: string;
}

/** Parses the first FRU device of `ipmitool fru print` into identity fields (product fields, then board, then chassis). */
export function parseFru(raw: string): FruIdentity {
  const text = storableText(raw);
  const firstDevice = text.split(/\n\s*\n/)[0] ?? '';
  const values = parseKeyValues(firstDevice);
  // FRU areas a maker never programmed say `To Be Filled By O.E.M.` or a serial of zeros: those are absent, and the
  // next area's value is taken (`presentText`, the drivers' one rule for placeholders).
  const first = (kind: PlaceholderKind, ...names: string[]): string | undefined =>
    names.map((name) => presentText(values.get(name), kind)).find((value) => value !== undefined);
  const identity: FruIdentity = {};
  const manufacturer = canonicalVendor(first('text', 'Product Manufacturer', 'Board Mfg'));
  const model = first('text', 'Product Name', 'Board Product');
  const serial = first('identity', 'Product Serial', 'Board Serial', 'Chassis Serial');
  const part = first('identity', 'Product Part Number', 'Board Part Number', 'Chassis Part Number');
  if (manufacturer) identity.manufacturer = manufacturer;
  if (model) identity.model = model;
  if (serial) identity.serialNumber = serial;
  if (part) identity.partNumber = part;
  return identity;
}

export interface ChassisStatus {
  powerOn?: boolean;
  faults: string[];
}

/** Parses `ipmitool chassis status`: power state and every fault flag that is set. */
export function parseChassisStatus(raw: string): ChassisStatus {
  const text = storableText(raw);
  const values = parseKeyValues(text);
  const power = values.get('System Power');
  const faults: string[] = [];
  for (const [key, value] of values) {
    if (/Fault|Overload/i.test(key) && value === 'true') faults.push(key);
    if (key === 'Chassis Intrusion' && value === 'active') faults.push(key);
  }
  return { ...(power === 'on' ? { powerOn: true } : power === 'off' ? { powerOn: false } : {}), faults };
}
