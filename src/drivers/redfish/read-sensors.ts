/**
 * Reads the sensors summary of every chassis: legacy `Thermal`/`Power` where a chassis links them (iLO 5 has
 * nothing else); then, for what they left empty (a legacy resource can exist and list nothing, while the PSUs and
 * fans are in the newer resources), `PowerSubsystem` (PowerSupplies and their Metrics), `ThermalSubsystem` (Fans)
 * and the `Sensors` collection (GB200/GH200 have no legacy resources), bounded by a sensor budget. Every reading
 * keeps its unit: a fan given in percent (`Reading`/`ReadingUnits`, or the older `CurrentReading`/`Units` of iLO 4)
 * is `%`, never RPM.
 */
import type { Health, SensorReading, SensorsObservedData } from '../../../events/index.js';
import { asResource, lastSegment, settleAll, type ObservationRecorder, type Resource, type ResourceReader } from './resource-reader.js';

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
  for (const located of chassis) {
    const chassisTemperatures = temperatures.length;
    const chassisFans = fans.length;
    const chassisSupplies = powerSupplies.length;
    const thermalLink = sensorsRec.link(located.resource, located.path, 'Thermal');
    const powerLink = sensorsRec.link(located.resource, located.path, 'Power');
    const sensorsLink = sensorsRec.link(located.resource, located.path, 'Sensors');
    if (thermalLink || powerLink) {
      const [thermal, power] = await settleAll([
        thermalLink ? reader.read(thermalLink, sensorsRec) : Promise.resolve(undefined),
        powerLink ? reader.read(powerLink, sensorsRec) : Promise.resolve(undefined),
      ]);
      if (thermal) {
        temperatures.push(...legacyTemperatures(thermal, thermalLink!, sensorsRec));
        fans.push(...legacyFans(thermal, thermalLink!, sensorsRec));
      }
      if (power) {
        powerSupplies.push(...legacyPowerSupplies(power, powerLink!, sensorsRec));
        const control = asResource(sensorsRec.array(power, powerLink!, 'PowerControl')[0]);
        const consumed = control ? sensorsRec.number(control, `${powerLink}#PowerControl/0`, 'PowerConsumedWatts') : undefined;
        if (powerConsumedWatts === undefined && consumed !== undefined) powerConsumedWatts = consumed;
      }
    }
    if (powerSupplies.length === chassisSupplies) {
      const subsystem = await readPowerSubsystem(located, reader, sensorsRec);
      powerSupplies.push(...subsystem.powerSupplies);
      if (powerConsumedWatts === undefined && subsystem.consumedWatts !== undefined) powerConsumedWatts = subsystem.consumedWatts;
    }
    if (temperatures.length === chassisTemperatures && sensorsLink && sensorBudget > 0) {
      const sensors = await reader.members(sensorsLink, sensorsRec, undefined, sensorBudget);
      sensorBudget -= sensors.length;
      for (const { path: at, resource: sensor } of sensors) {
        const { kind, reading } = collectionSensor(sensor, at, sensorsRec);
        (kind === 'temperature' ? temperatures : kind === 'fan' ? fans : other).push(reading);
      }
    }
    if (fans.length === chassisFans) fans.push(...(await readThermalSubsystemFans(located, reader, sensorsRec)));
  }

  return { temperatures, fans, other, powerSupplies, ...(powerConsumedWatts !== undefined ? { powerConsumedWatts } : {}) };
}

/** The legacy `Thermal` resource's temperatures (always in degrees Celsius). */
function legacyTemperatures(thermal: Resource, thermalLink: string, sensorsRec: ObservationRecorder): SensorReading[] {
  const temperatures: SensorReading[] = [];
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
    temperatures.push(reading);
  }
  return temperatures;
}

/** The legacy `Thermal` resource's fans, each with its unit: percent where the BMC says so, else RPM. */
function legacyFans(thermal: Resource, thermalLink: string, sensorsRec: ObservationRecorder): SensorReading[] {
  const fans: SensorReading[] = [];
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
    fans.push(reading);
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

/** The reading of a `{ Reading }` excerpt (`SpeedPercent`, `OutputPowerWatts`, `PowerWatts`), if it is a number. */
function excerpt(resource: Resource | undefined, key: string): number | undefined {
  const reading = asResource(resource?.[key])?.Reading;
  return typeof reading === 'number' && Number.isFinite(reading) ? reading : undefined;
}

/** `PowerSubsystem`'s power supplies (with each one's output from its Metrics) and the chassis' consumption. */
async function readPowerSubsystem(
  located: { path: string; resource: Resource },
  reader: ResourceReader,
  sensorsRec: ObservationRecorder,
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
    const watts = excerpt(metrics, 'OutputPowerWatts');
    if (watts !== undefined) {
      supply.outputWatts = watts;
      total = (total ?? 0) + watts;
    }
    powerSupplies.push(supply);
  }
  // The chassis' own consumption where it says it (EnvironmentMetrics), else what its supplies put out.
  const environmentLink = sensorsRec.link(located.resource, located.path, 'EnvironmentMetrics');
  const environment = environmentLink ? await reader.read(environmentLink, sensorsRec) : undefined;
  const consumed = excerpt(environment, 'PowerWatts') ?? total;
  return { powerSupplies, ...(consumed !== undefined ? { consumedWatts: consumed } : {}) };
}

/** `ThermalSubsystem`'s fans: RPM where a fan gives `SpeedPercent.SpeedRPM`, else its percentage, in `%`. */
async function readThermalSubsystemFans(located: { path: string; resource: Resource }, reader: ResourceReader, sensorsRec: ObservationRecorder): Promise<SensorReading[]> {
  const subsystemLink = sensorsRec.link(located.resource, located.path, 'ThermalSubsystem');
  if (!subsystemLink) return [];
  const subsystem = await reader.read(subsystemLink, sensorsRec);
  const fansLink = subsystem ? sensorsRec.link(subsystem, subsystemLink, 'Fans') : undefined;
  const members = fansLink ? await reader.members(fansLink, sensorsRec) : [];
  return members.map(({ path, resource }) => {
    const speed = asResource(resource.SpeedPercent);
    const rpm = typeof speed?.SpeedRPM === 'number' && Number.isFinite(speed.SpeedRPM) ? speed.SpeedRPM : undefined;
    const percent = excerpt(resource, 'SpeedPercent');
    const reading: SensorReading = { name: sensorsRec.text(resource, path, 'Name') ?? lastSegment(path), reading: rpm ?? percent ?? null, unit: rpm !== undefined ? 'RPM' : '%' };
    const health = parseHealth(asResource(resource.Status)?.Health, `${path}#Status.Health`, sensorsRec);
    if (health) reading.health = health;
    return reading;
  });
}
