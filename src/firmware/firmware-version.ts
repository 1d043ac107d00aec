/**
 * Firmware version normalization per dialect. The same firmware is spelled differently in different places of
 * one BMC (iLO 5: `2.72 Sep 04 2022` in FirmwareInventory, `iLO 5 v2.72` on the Manager), so comparing an EBOM
 * baseline with what was observed needs both strings brought to one form, and an auditor needs to know which
 * rule made them equal. Pure functions of the version strings and the dialect's rules (`version-rules.ts`): the
 * drivers use them as they read an inventory, the projections as they compare an EBOM baseline with what was seen.
 */
import { dialectVersionRules, standardVersionRules, type VersionRule } from './version-rules.ts';

/** A dialect, by id (`hpe-ilo5`) or as a record carrying its own rules (a driver's dialect record). */
export type VersionDialect = string | { id: string; firmware: { versionRules: readonly VersionRule[] } };

export interface NormalizedVersion {
  normalized: string;
  /** Id of the rule that produced `normalized`: a dialect rule, `strip-v-prefix`, `whitespace`, `not-present` or `identity`. */
  rule: string;
}

/** What BMCs print where there is no version: words, or placeholders made of dashes, stars and dots (`-*`, `--`, `.`). */
const NOT_PRESENT = /^(not present|version not available|n\/a|\[n\/a\]|none|unknown|[-*.]+)$/i;

function rulesOf(dialect: VersionDialect): readonly VersionRule[] {
  return typeof dialect === 'string' ? (dialectVersionRules[dialect] ?? []) : dialect.firmware.versionRules;
}

/** Brings one raw version string to the dialect's canonical form and names the rule used. */
export function normalizeFirmwareVersion(dialect: VersionDialect, component: string, raw: string): NormalizedVersion {
  const cleaned = raw.trim().replace(/\s+/g, ' ');
  if (NOT_PRESENT.test(cleaned)) return { normalized: '', rule: 'not-present' };
  for (const rule of [...rulesOf(dialect), ...standardVersionRules]) {
    if (rule.component && !rule.component.test(component)) continue;
    // Rules keep no state between calls: patterns carry no `g` flag, and `test` is not used on them.
    if (cleaned.match(rule.pattern)) return { normalized: cleaned.replace(rule.pattern, rule.replacement), rule: rule.id };
  }
  return { normalized: cleaned, rule: cleaned === raw ? 'identity' : 'whitespace' };
}

export interface VersionComparison {
  equal: boolean;
  a: NormalizedVersion;
  b: NormalizedVersion;
  /** Why they are equal: `identical` when the raw strings match, else the rules applied to each side. */
  because: string;
}

/** Whether two spellings name the same version under a dialect, and which rules made them equal. */
export function compareFirmwareVersions(dialect: VersionDialect, component: string, a: string, b: string): VersionComparison {
  const left = normalizeFirmwareVersion(dialect, component, a);
  const right = normalizeFirmwareVersion(dialect, component, b);
  const equal = a === b || (left.normalized !== '' && left.normalized === right.normalized);
  const because = a === b ? 'identical' : equal ? `${left.rule} + ${right.rule}` : 'different';
  return { equal, a: left, b: right, because };
}
