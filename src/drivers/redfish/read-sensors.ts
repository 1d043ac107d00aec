/**
 * Reads the sensors summary of every chassis: legacy `Thermal`/`Power` where a chassis links them (iLO 5 has
 * nothing else), else the `Sensors` collection (GB200/GH200 have no legacy resources), bounded by a sensor budget.
 * Every reading keeps its unit.
 */
import type { Health, SensorReading, SensorsObservedData } from '../../../events/driver-observations.js';
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
  for (const located of chassis) {
    const thermalLink = sensorsRec.link(located.resource, located.path, 'Thermal');
    const powerLink = sensorsRec.link(located.resource, located.path, 'Power');
    const sensorsLink = sensorsRec.link(located.resource, located.path, 'Sensors');
    if (thermalLink || powerLink) {
      const [thermal, power] = await settleAll([
        thermalLink ? reader.read(thermalLink, sensorsRec) : Promise.resolve(undefined),
        powerLink ? reader.read(powerLink, sensorsRec) : Promise.resolve(undefined),
      ]);
      if (thermal) {
        for (const [index, raw] of sensorsRec.array(thermal, thermalLink!, 'Temperatures').entries()) {
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
        for (const [index, raw] of sensorsRec.array(thermal, thermalLink!, 'Fans').entries()) {
          const item = asResource(raw);
          const at = `${thermalLink}#Fans/${index}`;
          if (!item) {
            sensorsRec.note(at, raw);
            continue;
          }
          const units = sensorsRec.text(item, at, 'ReadingUnits');
          const reading: SensorReading = {
            name: sensorsRec.text(item, at, 'Name') ?? sensorsRec.text(item, at, 'FanName') ?? `Fan ${index}`,
            reading: sensorsRec.number(item, at, 'Reading') ?? null,
            unit: units === 'Percent' ? '%' : units ?? 'RPM',
          };
          const health = parseHealth(asResource(item.Status)?.Health, `${at}#Status.Health`, sensorsRec);
          if (health) reading.health = health;
          fans.push(reading);
        }
      }
      if (power) {
        for (const [index, raw] of sensorsRec.array(power, powerLink!, 'PowerSupplies').entries()) {
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
        const control = asResource(sensorsRec.array(power, powerLink!, 'PowerControl')[0]);
        const consumed = control ? sensorsRec.number(control, `${powerLink}#PowerControl/0`, 'PowerConsumedWatts') : undefined;
        if (powerConsumedWatts === undefined && consumed !== undefined) powerConsumedWatts = consumed;
      }
    } else if (sensorsLink && sensorBudget > 0) {
      const links = (await reader.memberLinks(sensorsLink, sensorsRec)).slice(0, sensorBudget);
      sensorBudget -= links.length;
      const sensors = await settleAll(links.map((sensorLink) => reader.read(sensorLink, sensorsRec)));
      sensors.forEach((sensor, index) => {
        if (!sensor) return;
        const at = canonicalPath(links[index]!);
        const type = sensorsRec.text(sensor, at, 'ReadingType');
        const units = sensorsRec.text(sensor, at, 'ReadingUnits');
        const reading: SensorReading = {
          name: sensorsRec.text(sensor, at, 'Name') ?? lastSegment(at),
          reading: sensorsRec.number(sensor, at, 'Reading') ?? null,
          unit: units ?? (type === 'Temperature' ? 'Cel' : type === 'Rotational' ? 'RPM' : 'unknown'),
        };
        const health = parseHealth(asResource(sensor.Status)?.Health, `${at}#Status.Health`, sensorsRec);
        if (health) reading.health = health;
        if (type === 'Temperature') temperatures.push(reading);
        else if (type === 'Rotational' || reading.unit === 'RPM') fans.push(reading);
        else other.push(reading);
      });
    }
  }

  return { temperatures, fans, other, powerSupplies, ...(powerConsumedWatts !== undefined ? { powerConsumedWatts } : {}) };
}
