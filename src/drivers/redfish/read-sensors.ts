/**
 * Reads the sensors summary of every chassis from every place Redfish puts readings: legacy `Thermal`/`Power` (iLO 5
 * has nothing else) and the `Sensors` collection both (a DGX/HGX board has a legacy `Thermal` and its PSU and board
 * power only in `Sensors`; GB200/GH200 have no legacy resources at all), the Sensor kept where both give one reading;
 * then, for what those left empty, `PowerSubsystem` (PowerSupplies and their Metrics) and `ThermalSubsystem` (Fans).
 * A reading given only by link (`{ "DataSourceUri": ... }` without `Reading`) is the linked Sensor's, followed a
 * bounded number of times per read. Bounded by a sensor budget. Every reading keeps its unit: a fan given in percent
 * (`Reading`/`ReadingUnits`, or the older `CurrentReading`/`Units` of iLO 4) is `%`, never RPM.
 */
import type { Health, SensorReading, SensorsObservedData } from '../../../events/index.js';
import { asResource, canonicalPath, lastSegment, settleAll, type ObservationRecorder, type Resource, type ResourceReader } from './resource-reader.js';

export interface ChassisSensors {
  temperatures: SensorReading[];
  fans: SensorReading[];
  other: SensorReading[];
  powerSupplies: SensorsObservedData['powerSupplies'];
  powerConsumedWatts?: number;
}

/** `OK`/`Warning`/`Critical`, or `undefined` (absent or recorded as unrecognized). */
export function parseHealth(value: unknown, path: string, recorder: ObservationRecorder): Health | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'OK' || value === 'Warning' || value === 'Critical') return value;
  recorder.note(path, value);
  return undefined;
}

export async function readChassisSensors(
  chassis: ReadonlyArray<{ path: string; resource: Resource }>,
  reader: ResourceReader,
  sensorsRec: ObservationRecorder,
  maxSensors: number,
): Promise<ChassisSensors> {
  const temperatures: SensorReading[] = [];
  const fans: SensorReading[] = [];
  const other: SensorReading[] = [];
  const powerSupplies: SensorsObservedData['powerSupplies'] = [];
  let powerConsumedWatts: number | undefined;
  let sensorBudget = maxSensors;
  const linked = new LinkedReadings(reader, sensorsRec, MAX_LINKED_READINGS);
  for (const located of chassis) {
    const chassisFans = fans.length;
    const chassisSupplies = powerSupplies.length;
    const thermalLink = sensorsRec.link(located.resource, located.path, 'Thermal');
    const powerLink = sensorsRec.link(located.resource, located.path, 'Power');
    const sensorsLink = sensorsRec.link(located.resource, located.path, 'Sensors');
    const [thermal, power] = await settleAll([
      thermalLink ? reader.read(thermalLink, sensorsRec) : Promise.resolve(undefined),
      powerLink ? reader.read(powerLink, sensorsRec) : Promise.resolve(undefined),
    ]);
    // The `Sensors` collection is read beside a legacy `Thermal`, not instead of it: a DGX/HGX board keeps its
    // temperatures in `Thermal` and its PSU and board power only in `Sensors`. Where both give one reading, the
    // Sensor is kept (`overlapKeys`).
    const modern: Keyed[] = [];
    if (sensorsLink && sensorBudget > 0) {
      const sensors = await reader.members(sensorsLink, sensorsRec, undefined, sensorBudget);
      sensorBudget -= sensors.length;
      for (const { path: at, resource: sensor } of sensors) {
        const { kind, reading } = collectionSensor(sensor, at, sensorsRec);
        modern.push({ kind, reading, keys: overlapKeys(kind, sensor, at) });
        linked.know(at, reading.reading);
      }
    }
    const modernKeys = new Set(modern.flatMap((entry) => entry.keys));
    const notInModern = (entry: Keyed): boolean => !entry.keys.some((key) => modernKeys.has(key));
    if (thermal) {
      temperatures.push(...legacyTemperatures(thermal, thermalLink!, sensorsRec).filter(notInModern).map((entry) => entry.reading));
      fans.push(...legacyFans(thermal, thermalLink!, sensorsRec).filter(notInModern).map((entry) => entry.reading));
    }
    for (const { kind, reading } of modern) (kind === 'temperature' ? temperatures : kind === 'fan' ? fans : other).push(reading);
    if (power) {
      powerSupplies.push(...legacyPowerSupplies(power, powerLink!, sensorsRec));
      const control = asResource(sensorsRec.array(power, powerLink!, 'PowerControl')[0]);
      const consumed = control ? sensorsRec.number(control, `${powerLink}#PowerControl/0`, 'PowerConsumedWatts') : undefined;
      if (powerConsumedWatts === undefined && consumed !== undefined) powerConsumedWatts = consumed;
    }
    if (powerSupplies.length === chassisSupplies) {
      const subsystem = await readPowerSubsystem(located, reader, sensorsRec, linked);
      powerSupplies.push(...subsystem.powerSupplies);
      if (powerConsumedWatts === undefined && subsystem.consumedWatts !== undefined) powerConsumedWatts = subsystem.consumedWatts;
    }
    if (fans.length === chassisFans) fans.push(...(await readThermalSubsystemFans(located, reader, sensorsRec, linked)));
  }

  return { temperatures, fans, other, powerSupplies, ...(powerConsumedWatts !== undefined ? { powerConsumedWatts } : {}) };
}

/** Readings followed by `DataSourceUri` in one read, at most: each is a request. */
const MAX_LINKED_READINGS = 64;

/** A reading with what tells it apart across the legacy and the newer resources. */
interface Keyed {
  kind: 'temperature' | 'fan' | 'other';
  reading: SensorReading;
  keys: string[];
}

/** A name as compared across resources: case, spacing and punctuation aside (`CPU1 Temp`, `CPU1Temp`). */
function comparableName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '');
}

/**
 * What identifies one physical sensor in either shape, within one kind (a temperature never stands for a power
 * reading of the same name): its name, also without a trailing `Temperature`/`Temp` (legacy `CPU0dimm0 Temperature`
 * is the Sensor `CPU0dimm0` of type Temperature), the Sensor's id, a legacy member's `MemberId` when it is not a bare
 * index (iDRAC writes `iDRAC.Embedded.1#CPU1Temp`), and the Sensor a legacy member points at (`DataSourceUri`).
 */
function overlapKeys(kind: Keyed['kind'], item: Resource, at: string): string[] {
  const names: string[] = [];
  if (typeof item.Name === 'string' && item.Name.trim().length > 0) {
    names.push(comparableName(item.Name));
    if (kind === 'temperature') names.push(comparableName(item.Name.replace(/\s*(?:temperature|temp)$/i, '')));
  }
  const ids = [item.Id, item.MemberId].filter((id): id is string => typeof id === 'string' && /\D/.test(id)).map((id) => id.split('#').pop() ?? id);
  if (!at.includes('#')) ids.push(lastSegment(at));
  if (typeof item.DataSourceUri === 'string') ids.push(lastSegment(item.DataSourceUri));
  return [...names.filter((name) => name.length > 0).map((name) => `${kind}:name:${name}`), ...ids.filter((id) => id.length > 0).map((id) => `${kind}:id:${comparableName(id)}`)];
}

/**
 * Readings given by link: a `{ DataSourceUri }` excerpt without its `Reading` (or with a null one) is the Sensor's own
 * `Reading`, fetched once per link and at most `limit` links per read. Only paths on the BMC are followed.
 */
class LinkedReadings {
  readonly #seen = new Map<string, Promise<number | undefined>>();
  #left: number;

  constructor(
    private readonly reader: ResourceReader,
    private readonly recorder: ObservationRecorder,
    limit: number,
  ) {
    this.#left = limit;
  }

  /** A Sensor already read (listed in a `Sensors` collection): a link to it costs no request. */
  know(path: string, reading: number | null): void {
    this.#seen.set(canonicalPath(path), Promise.resolve(reading ?? undefined));
  }

  /** The reading of `resource[key]`: its own `Reading`, else that of the Sensor its `DataSourceUri` names. */
  async excerpt(resource: Resource | undefined, key: string): Promise<number | undefined> {
    const excerptValue = asResource(resource?.[key]);
    const reading = excerptValue?.Reading;
    if (typeof reading === 'number' && Number.isFinite(reading)) return reading;
    const link = excerptValue?.DataSourceUri;
    if (typeof link !== 'string' || !link.startsWith('/')) return undefined;
    const path = canonicalPath(link);
    let pending = this.#seen.get(path);
    if (!pending) {
      if (this.#left <= 0) {
        this.recorder.unreadable.push({ path, code: 'BUDGET_EXHAUSTED' });
        return undefined;
      }
      this.#left -= 1;
      pending = this.reader.read(path, this.recorder).then((sensor) => {
        const value = sensor?.Reading;
        return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
      });
      this.#seen.set(path, pending);
    }
    return pending;
  }
}

/** The legacy `Thermal` resource's temperatures (always in degrees Celsius). */
function legacyTemperatures(thermal: Resource, thermalLink: string, sensorsRec: ObservationRecorder): Keyed[] {
  const temperatures: Keyed[] = [];
  for (const [index, raw] of sensorsRec.array(thermal, thermalLink, 'Temperatures').entries()) {
    const item = asResource(raw);
    const at = `${thermalLink}#Temperatures/${index}`;
    if (!item) {
      sensorsRec.note(at, raw);
      continue;
    }
    const reading: SensorReading = {
      name: sensorsRec.text(item, at, 'Name') ?? `Temperature ${index}`,
      reading: sensorsRec.number(item, at, 'ReadingCelsius') ?? null,
      unit: 'Cel',
    };
    const health = parseHealth(asResource(item.Status)?.Health, `${at}#Status.Health`, sensorsRec);
    if (health) reading.health = health;
    temperatures.push({ kind: 'temperature', reading, keys: overlapKeys('temperature', item, at) });
  }
  return temperatures;
}

/** The legacy `Thermal` resource's fans, each with its unit: percent where the BMC says so, else RPM. */
function legacyFans(thermal: Resource, thermalLink: string, sensorsRec: ObservationRecorder): Keyed[] {
  const fans: Keyed[] = [];
  for (const [index, raw] of sensorsRec.array(thermal, thermalLink, 'Fans').entries()) {
    const item = asResource(raw);
    const at = `${thermalLink}#Fans/${index}`;
    if (!item) {
      sensorsRec.note(at, raw);
      continue;
    }
    const units = sensorsRec.text(item, at, 'ReadingUnits') ?? sensorsRec.text(item, at, 'Units');
    const reading: SensorReading = {
      name: sensorsRec.text(item, at, 'Name') ?? sensorsRec.text(item, at, 'FanName') ?? `Fan ${index}`,
      reading: sensorsRec.number(item, at, 'Reading') ?? sensorsRec.number(item, at, 'CurrentReading') ?? sensorsRec.number(item, at, 'ReadingRPM') ?? null,
      unit: units === 'Percent' ? '%' : units ?? 'RPM',
    };
    const health = parseHealth(asResource(item.Status)?.Health, `${at}#Status.Health`, sensorsRec);
    if (health) reading.health = health;
    fans.push({ kind: 'fan', reading, keys: overlapKeys('fan', item, at) });
  }
  return fans;
}

/** The legacy `Power` resource's power supplies. */
function legacyPowerSupplies(power: Resource, powerLink: string, sensorsRec: ObservationRecorder): SensorsObservedData['powerSupplies'] {
  const powerSupplies: SensorsObservedData['powerSupplies'] = [];
  for (const [index, raw] of sensorsRec.array(power, powerLink, 'PowerSupplies').entries()) {
    const item = asResource(raw);
    const at = `${powerLink}#PowerSupplies/${index}`;
    if (!item) {
      sensorsRec.note(at, raw);
      continue;
    }
    const supply: SensorsObservedData['powerSupplies'][number] = { name: sensorsRec.text(item, at, 'Name') ?? `PSU ${index}` };
    const status = asResource(item.Status);
    const health = parseHealth(status?.Health, `${at}#Status.Health`, sensorsRec);
    if (health) supply.health = health;
    if (typeof status?.State === 'string') supply.state = status.State;
    const watts = sensorsRec.number(item, at, 'LastPowerOutputWatts');
    if (watts !== undefined) supply.outputWatts = watts;
    const model = sensorsRec.text(item, at, 'Model');
    if (model) supply.model = model;
    const firmware = sensorsRec.text(item, at, 'FirmwareVersion');
    if (firmware) supply.firmwareVersion = firmware;
    powerSupplies.push(supply);
  }
  return powerSupplies;
}

/** One Sensor of a `Sensors` collection, with what it measures: its unit from `ReadingUnits`, else from its type. */
function collectionSensor(sensor: Resource, at: string, sensorsRec: ObservationRecorder): { kind: 'temperature' | 'fan' | 'other'; reading: SensorReading } {
  const type = sensorsRec.text(sensor, at, 'ReadingType');
  const units = sensorsRec.text(sensor, at, 'ReadingUnits');
  const reading: SensorReading = {
    name: sensorsRec.text(sensor, at, 'Name') ?? lastSegment(at),
    reading: sensorsRec.number(sensor, at, 'Reading') ?? null,
    unit: units ?? (type === 'Temperature' ? 'Cel' : type === 'Rotational' ? 'RPM' : 'unknown'),
  };
  const health = parseHealth(asResource(sensor.Status)?.Health, `${at}#Status.Health`, sensorsRec);
  if (health) reading.health = health;
  const kind = type === 'Temperature' ? 'temperature' : type === 'Rotational' || reading.unit === 'RPM' ? 'fan' : 'other';
  return { kind, reading };
}

/** `PowerSubsystem`'s power supplies (with each one's output from its Metrics) and the chassis' consumption. */
async function readPowerSubsystem(
  located: { path: string; resource: Resource },
  reader: ResourceReader,
  sensorsRec: ObservationRecorder,
  linked: LinkedReadings,
): Promise<{ powerSupplies: SensorsObservedData['powerSupplies']; consumedWatts?: number }> {
  const subsystemLink = sensorsRec.link(located.resource, located.path, 'PowerSubsystem');
  if (!subsystemLink) return { powerSupplies: [] };
  const subsystem = await reader.read(subsystemLink, sensorsRec);
  const suppliesLink = subsystem ? sensorsRec.link(subsystem, subsystemLink, 'PowerSupplies') : undefined;
  const members = suppliesLink ? await reader.members(suppliesLink, sensorsRec) : [];
  const powerSupplies: SensorsObservedData['powerSupplies'] = [];
  let total: number | undefined;
  for (const { path, resource } of members) {
    const supply: SensorsObservedData['powerSupplies'][number] = { name: sensorsRec.text(resource, path, 'Name') ?? lastSegment(path) };
    const status = asResource(resource.Status);
    const health = parseHealth(status?.Health, `${path}#Status.Health`, sensorsRec);
    if (health) supply.health = health;
    if (typeof status?.State === 'string') supply.state = status.State;
    const model = sensorsRec.text(resource, path, 'Model');
    if (model) supply.model = model;
    const firmware = sensorsRec.text(resource, path, 'FirmwareVersion');
    if (firmware) supply.firmwareVersion = firmware;
    const metricsLink = sensorsRec.link(resource, path, 'Metrics');
    const metrics = metricsLink ? await reader.read(metricsLink, sensorsRec) : undefined;
    const watts = await linked.excerpt(metrics, 'OutputPowerWatts');
    if (watts !== undefined) {
      supply.outputWatts = watts;
      total = (total ?? 0) + watts;
    }
    powerSupplies.push(supply);
  }
  // The chassis' own consumption where it says it (EnvironmentMetrics), else what its supplies put out.
  const environmentLink = sensorsRec.link(located.resource, located.path, 'EnvironmentMetrics');
  const environment = environmentLink ? await reader.read(environmentLink, sensorsRec) : undefined;
  const consumed = (await linked.excerpt(environment, 'PowerWatts')) ?? total;
  return { powerSupplies, ...(consumed !== undefined ? { consumedWatts: consumed } : {}) };
}

/** `ThermalSubsystem`'s fans: RPM where a fan gives `SpeedPercent.SpeedRPM`, else its percentage, in `%`. */
async function readThermalSubsystemFans(located: { path: string; resource: Resource }, reader: ResourceReader, sensorsRec: ObservationRecorder, linked: LinkedReadings): Promise<SensorReading[]> {
  const subsystemLink = sensorsRec.link(located.resource, located.path, 'ThermalSubsystem');
  if (!subsystemLink) return [];
  const subsystem = await reader.read(subsystemLink, sensorsRec);
  const fansLink = subsystem ? sensorsRec.link(subsystem, subsystemLink, 'Fans') : undefined;
  const members = fansLink ? await reader.members(fansLink, sensorsRec) : [];
  return settleAll(members.map(async ({ path, resource }) => {
    const speed = asResource(resource.SpeedPercent);
    const rpm = typeof speed?.SpeedRPM === 'number' && Number.isFinite(speed.SpeedRPM) ? speed.SpeedRPM : undefined;
    const percent = rpm === undefined ? await linked.excerpt(resource, 'SpeedPercent') : undefined;
    const reading: SensorReading = { name: sensorsRec.text(resource, path, 'Name') ?? lastSegment(path), reading: rpm ?? percent ?? null, unit: rpm !== undefined ? 'RPM' : '%' };
    const health = parseHealth(asResource(resource.Status)?.Health, `${path}#Status.Health`, sensorsRec);
    if (health) reading.health = health;
    return reading;
  }));
}
