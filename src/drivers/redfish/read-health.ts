/**
 * The health rollup of a node and the conditions behind it. Systems and chassis are rolled up (HealthRollup,
 * else Health); managers only contribute conditions, because a GB200 HGX BMC that is Starting reports Critical
 * while everything it manages is OK (`nvidia_gb200/Managers/HGX_BMC_0`). `Status.Conditions` entries (NVIDIA)
 * become conditions with their message ids; identical conditions are reported once.
 */
import type { Health, HealthObservedData } from '../../../events/index.js';
import { parseHealth } from './read-sensors.js';
import { asResource, canonicalPath, type ObservationRecorder, type Resource } from './resource-reader.js';

const HEALTH_ORDER: Record<Health, number> = { Unknown: 0, OK: 1, Warning: 2, Critical: 3 };

export function worstHealth(values: Array<Health | undefined>): Health {
  return values.reduce<Health>((acc, value) => (value && HEALTH_ORDER[value] > HEALTH_ORDER[acc] ? value : acc), 'Unknown');
}

type Located = { path: string; resource: Resource };

export function rollUpHealth(
  systems: readonly Located[],
  chassis: readonly Located[],
  managers: readonly Located[],
  healthRec: ObservationRecorder,
): Pick<HealthObservedData, 'health' | 'conditions'> {
  const conditions: HealthObservedData['conditions'] = [];
  const seenConditions = new Set<string>();
  const addCondition = (condition: HealthObservedData['conditions'][number]): void => {
    const key = JSON.stringify(condition);
    if (seenConditions.has(key)) return;
    seenConditions.add(key);
    conditions.push(condition);
  };
  const rollups: Array<Health | undefined> = [];
  for (const [group, list] of [['system', systems], ['chassis', chassis], ['manager', managers]] as const) {
    for (const located of list) {
      const status = healthRec.object(located.resource, located.path, 'Status');
      if (!status) continue;
      const health = parseHealth(status.Health, `${located.path}#Status.Health`, healthRec);
      const rollup = parseHealth(status.HealthRollup, `${located.path}#Status.HealthRollup`, healthRec);
      // Managers' health is reported as a condition but not rolled up: a GB200 HGX BMC that is Starting reports
      // Critical while everything it manages is OK (nvidia_gb200/Managers/HGX_BMC_0).
      if (group !== 'manager') rollups.push(rollup ?? health);
      const state = typeof status.State === 'string' ? status.State : undefined;
      const worstHere = worstHealth([health, rollup]);
      if (worstHere === 'Warning' || worstHere === 'Critical') {
        addCondition({ origin: located.path, health: worstHere, ...(state ? { state } : {}) });
      }
      for (const [index, raw] of healthRec.array(status, `${located.path}#Status`, 'Conditions').entries()) {
        const entry = asResource(raw);
        if (!entry) {
          healthRec.note(`${located.path}#Status.Conditions/${index}`, raw);
          continue;
        }
        const at = `${located.path}#Status.Conditions/${index}`;
        const origin = asResource(entry.OriginOfCondition)?.['@odata.id'];
        const condition: HealthObservedData['conditions'][number] = { origin: typeof origin === 'string' ? canonicalPath(origin) : located.path };
        const messageId = healthRec.text(entry, at, 'MessageId');
        if (messageId) condition.messageId = messageId;
        const message = healthRec.text(entry, at, 'Message');
        if (message) condition.message = message;
        const severity = healthRec.text(entry, at, 'Severity') ?? healthRec.text(entry, at, 'MessageSeverity');
        if (severity) condition.severity = severity;
        addCondition(condition);
      }
    }
  }

  return { health: worstHealth(rollups), conditions };
}
