/**
 * The firmware comparison drift uses: the dialect rules of `src/firmware` (`compareFirmwareVersions`), so an EBOM
 * baseline and an observed version spelled differently by the same BMC compare equal, with the rules named.
 */
import { compareFirmwareVersions } from '../../src/firmware/index.js';
import type { FirmwareComparator } from './drift-evolve.js';

export const dialectFirmwareComparator: FirmwareComparator = (dialect, component, declared, observed) => {
  const comparison = compareFirmwareVersions(dialect, component, declared, observed);
  return { equal: comparison.equal, because: comparison.because };
};
