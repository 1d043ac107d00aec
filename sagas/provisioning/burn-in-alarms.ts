/**
 * Which of a node's open alarms fail its burn-in. All of them, but one: a drift alarm whose every difference is a
 * firmware component the provisioning itself set, now reading exactly the version it asked for. That drift is the
 * provisioning's own doing (the operator's `--baseline` is newer than the EBOM's declaration), not a fault of the
 * node: the node becomes ready, and the alarm stays open on the dashboard until the EBOM declares the new version.
 * Pure: the alarms and the baseline come in as arguments.
 */
import { versionMatches } from '../firmware-rollout/step-decide.js';

export interface OpenAlarm {
  kind: string;
  summary: string;
  /** For drift: the fields that differ, with what the EBOM declares and what the node reports. */
  evidence?: { fields?: Array<{ field?: string; kind?: string; declared?: string | null; observed?: string | null }> } | null;
}

export function burnInAlarmProblems(alarms: readonly OpenAlarm[], baseline: ReadonlyArray<{ component: string; version: string }>): string[] {
  const problems: string[] = [];
  for (const alarm of alarms) {
    if (alarm.kind === 'drift' && isOwnBaselineDrift(alarm, baseline)) continue;
    problems.push(`alarm ${alarm.kind}: ${alarm.summary}`.slice(0, 300));
  }
  return problems;
}

function isOwnBaselineDrift(alarm: OpenAlarm, baseline: ReadonlyArray<{ component: string; version: string }>): boolean {
  const differing = (alarm.evidence?.fields ?? []).filter((field) => field.kind !== 'match');
  if (differing.length === 0) return false;
  return differing.every((field) => {
    const component = field.field?.startsWith('firmware:') ? field.field.slice('firmware:'.length) : undefined;
    const image = baseline.find((entry) => entry.component === component);
    return image !== undefined && field.kind === 'mismatch' && versionMatches(field.observed, image.version, image.component);
  });
}
