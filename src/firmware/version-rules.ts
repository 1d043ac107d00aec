/**
 * How each BMC dialect spells firmware versions, as rewrite rules to one canonical form. Pure data: the drivers
 * apply them when they read a firmware inventory, the projections when they compare an EBOM baseline with what
 * was observed, so both sides agree on what "the same version" means. Each rule names the capture that shows it
 * (a path under `$FLEET_LEDGER_FIXTURES`).
 */

/** A rewrite of firmware version strings: `pattern` matched against the trimmed raw string, `replacement` applied. */
export interface VersionRule {
  id: string;
  /** Only for components whose name or id matches (all components when absent). */
  component?: RegExp;
  pattern: RegExp;
  replacement: string;
  fixture?: string;
}

/** Version rules every dialect applies after its own (`v` prefixes). */
export const standardVersionRules: readonly VersionRule[] = [
  { id: 'strip-v-prefix', pattern: /^[vV](\d[\w.\-]*)$/, replacement: '$1' },
];

const nvidiaVersionRules: readonly VersionRule[] = [
  { id: 'hex-byte-sequence', pattern: /^0x([0-9a-fA-F]{2})\s+0x([0-9a-fA-F]{2})\s+0x([0-9a-fA-F]{2})\s+0x([0-9a-fA-F]{2})$/, replacement: '$1.$2.$3.$4', fixture: 'redfish/nvidia_gb200/redfish/v1/UpdateService/FirmwareInventory/FW_CPLD_0/index.json' },
];

/** The rules of each dialect, by dialect id (`hpe-ilo5`, ...); a dialect not listed has none of its own. */
export const dialectVersionRules: Readonly<Record<string, readonly VersionRule[]>> = {
  'hpe-ilo5': [
    { id: 'hpe-ilo-date-suffix', component: /^iLO/, pattern: /^(\d+\.\d+)\s+[A-Z][a-z]{2}\s+\d{1,2}\s+\d{4}$/, replacement: '$1', fixture: 'redfish/hpe/redfish/v1/UpdateService/FirmwareInventory/1/index.json' },
    { id: 'hpe-ilo-product-prefix', pattern: /^iLO\s*\d+\s+v(\d+\.\d+)$/, replacement: '$1', fixture: 'redfish/hpe/redfish/v1/Managers/1/index.json' },
    { id: 'hpe-rom-family-date', pattern: /^([A-Z]\d{2})\s+v(\d+\.\d+)\s+\(\d{2}\/\d{2}\/\d{4}\)$/, replacement: '$1 $2', fixture: 'redfish/hpe/redfish/v1/Systems/1/index.json' },
  ],
  'supermicro-x13': [
    { id: 'smc-bios-date-ver', component: /BIOS/, pattern: /^BIOS Date:\s*\d{2}\/\d{2}\/\d{4}\s+Ver\s+(\S+)$/, replacement: '$1', fixture: 'redfish/supermicro/redfish/v1/UpdateService/FirmwareInventory/BIOS/index.json' },
  ],
  'nvidia-openbmc-gb200': nvidiaVersionRules,
  'nvidia-openbmc-gh200': [
    ...nvidiaVersionRules,
    { id: 'trailing-padding', pattern: /^(\S+)\s+$/, replacement: '$1', fixture: 'redfish/nvidia_gh200/redfish/v1/UpdateService/FirmwareInventory/HGX_FW_GPU_0/index.json' },
  ],
  'nvidia-openbmc-nvswitch': nvidiaVersionRules,
};
