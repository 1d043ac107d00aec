/**
 * Firmware versions as the fleet spells them: each dialect's rewrite rules and the pure functions that bring two
 * spellings to one form and say which rule made them equal. Shared by the drivers and the projections, so it
 * depends on neither.
 */
export { compareFirmwareVersions, normalizeFirmwareVersion } from './firmware-version.ts';
export type { NormalizedVersion, VersionComparison, VersionDialect } from './firmware-version.ts';
export { dialectVersionRules, standardVersionRules } from './version-rules.ts';
export type { VersionRule } from './version-rules.ts';
