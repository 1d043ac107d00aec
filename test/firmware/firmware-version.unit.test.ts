import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { redfishDialects } from '../../src/drivers/index.js';
import { compareFirmwareVersions, normalizeFirmwareVersion } from '../../src/firmware/index.js';

describe('firmware version normalization per dialect', () => {
  it('iLO 5 "2.72 Sep 04 2022" (FirmwareInventory) and "iLO 5 v2.72" (Manager) are the same version, and says why', () => {
    const comparison = compareFirmwareVersions('hpe-ilo5', 'iLO 5', '2.72 Sep 04 2022', 'iLO 5 v2.72');
    expect(comparison.equal).toBe(true);
    expect(comparison.a).toEqual({ normalized: '2.72', rule: 'hpe-ilo-date-suffix' });
    expect(comparison.b).toEqual({ normalized: '2.72', rule: 'hpe-ilo-product-prefix' });
    expect(comparison.because).toBe('hpe-ilo-date-suffix + hpe-ilo-product-prefix');
  });

  it('different iLO versions stay different', () => {
    expect(compareFirmwareVersions('hpe-ilo5', 'iLO 5', '2.72 Sep 04 2022', 'iLO 5 v2.78').equal).toBe(false);
  });

  it('Supermicro "BIOS Date: 08/04/2023 Ver 1.4" is the System BiosVersion "1.4"', () => {
    expect(normalizeFirmwareVersion('supermicro-x13', 'BIOS', 'BIOS Date: 08/04/2023 Ver 1.4')).toEqual({ normalized: '1.4', rule: 'smc-bios-date-ver' });
    expect(compareFirmwareVersions('supermicro-x13', 'BIOS', 'BIOS Date: 08/04/2023 Ver 1.4', '1.4').equal).toBe(true);
  });

  it('HPE System ROM "A42 v2.60 (08/11/2022)" keeps its family and drops the date', () => {
    expect(normalizeFirmwareVersion('hpe-ilo5', 'System ROM', 'A42 v2.60 (08/11/2022)')).toEqual({ normalized: 'A42 2.60', rule: 'hpe-rom-family-date' });
  });

  it('a GB200 CPLD byte list "0x00 0x0b 0x03 0x04" becomes dotted bytes', () => {
    expect(normalizeFirmwareVersion('nvidia-openbmc-gb200', 'FW_CPLD_0', '0x00 0x0b 0x03 0x04')).toEqual({ normalized: '00.0b.03.04', rule: 'hex-byte-sequence' });
  });

  it('GH200 padding "96.00.A6.00.01  " equals "96.00.A6.00.01"', () => {
    const comparison = compareFirmwareVersions('nvidia-openbmc-gh200', 'HGX_FW_GPU_0', '96.00.A6.00.01  ', '96.00.A6.00.01');
    expect(comparison.equal).toBe(true);
  });

  it('"Not Present" and "version not available" are no version, and equal nothing', () => {
    expect(normalizeFirmwareVersion('supermicro-x13', 'BMC Backup', 'Not Present')).toEqual({ normalized: '', rule: 'not-present' });
    expect(compareFirmwareVersions('nvidia-bluefield-bmc', 'golden', 'version not available', 'Not Present').equal).toBe(false);
  });

  it('an unknown dialect id falls back to the generic rules (v prefix, whitespace)', () => {
    expect(normalizeFirmwareVersion('no-such-dialect', 'BMC', 'v1.2.3')).toEqual({ normalized: '1.2.3', rule: 'strip-v-prefix' });
    expect(normalizeFirmwareVersion('generic', 'BMC', ' 1.2  3 ')).toEqual({ normalized: '1.2 3', rule: 'whitespace' });
  });

  it('for every dialect and string, normalization is idempotent and comparison is symmetric', () => {
    fc.assert(
      fc.property(fc.constantFrom(...redfishDialects.map((d) => d.id)), fc.string(), fc.string(), (dialect, a, b) => {
        const once = normalizeFirmwareVersion(dialect, 'component', a).normalized;
        expect(normalizeFirmwareVersion(dialect, 'component', once).normalized).toBe(once);
        expect(compareFirmwareVersions(dialect, 'component', a, b).equal).toBe(compareFirmwareVersions(dialect, 'component', b, a).equal);
      }),
      { numRuns: 300 },
    );
  });
});
