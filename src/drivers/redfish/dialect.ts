/**
 * A Redfish dialect: the small record of what one vendor/generation does differently from the standard schema.
 * Pure data (regular expressions and literals), no code, so a fleet report can list which record read each node
 * and a reviewer can check every quirk against the capture it names.
 */
import { dialectVersionRules, type VersionRule } from '../../firmware/index.js';

export { standardVersionRules, type VersionRule } from '../../firmware/index.js';

/** One observed deviation from the standard, tied to the capture that shows it (a path under `$FLEET_LEDGER_FIXTURES`, the team's captures kept outside the repository). */
export interface DialectQuirk {
  id: string;
  description: string;
  fixture: string;
}


/** Where GPUs are found, besides the standard `Processors` with `ProcessorType: GPU`. */
export type GpuSource =
  | { kind: 'chassis'; id: RegExp }
  | { kind: 'pcie-device'; id: RegExp };

/** Markers of a dialect; every present one must hold. OEM conditions name a key of that resource's `Oem`. */
export interface DetectRule {
  vendor?: RegExp;
  product?: RegExp;
  rootOem?: string;
  managerModel?: RegExp;
  managerFirmware?: RegExp;
  managerOem?: string;
  systemManufacturer?: RegExp;
  systemOem?: string;
  chassisManufacturer?: RegExp;
  /** A key of the `Oem` of any chassis. */
  chassisOem?: string;
  /** The service root's `RedfishVersion`. */
  redfishVersion?: RegExp;
  /** The id (or last path segment) of any system, manager or chassis: FQDDs, `Self`, `HGX_Baseboard_0`. */
  memberId?: RegExp;
}

/**
 * A weaker sign of a dialect, used only when no record's `detect` holds in full (a partial tree: the Manager
 * unreadable, a root without `Vendor`). Each clue that holds adds its weight; the record with the most wins.
 * Weights follow how much a clue says: 3 for what the service root says of itself (`Vendor`, `Product`, its `Oem`
 * namespace), 2 for id shapes a vendor's firmware uses, 1 for a manufacturer (a reseller's board says another name).
 */
export interface DialectClue {
  rule: DetectRule;
  weight: 1 | 2 | 3;
}

export interface RedfishDialect {
  id: string;
  vendor: string;
  generation: string;
  /**
   * All present conditions must hold. Evaluated on the service root, the first manager, the first system and the
   * first chassis. Older firmware sends no `ServiceRoot.Vendor`, so a record may also be recognised by other
   * markers (`alsoDetect`: any one of those rule sets, each in full).
   */
  detect: DetectRule;
  alsoDetect?: DetectRule[];
  /** Weaker signs, weighed when no record's `detect` or `alsoDetect` holds (`detectDialect`). */
  clues?: DialectClue[];
  /** Id conventions as seen in captures (documentation, and used to pick the primary system). */
  ids: { systems: string[]; managers: string[]; primarySystem?: RegExp };
  /** OEM namespaces this record understands enough to not report them as unrecognized. */
  oemNamespaces: string[];
  firmware: {
    /** Firmware inventory entries (id or name) that are the BMC's and the BIOS's own firmware. */
    bmc?: RegExp;
    bios?: RegExp;
    /** How an inventory id encodes which copy it is (Dell `Installed-`/`Previous-`, Supermicro `Golden_`). */
    slotPrefixes?: Array<{ pattern: RegExp; slot: 'installed' | 'current' | 'previous' | 'staging' | 'golden' | 'backup' }>;
    versionRules: VersionRule[];
  };
  gpuSources: GpuSource[];
  /** GB200/GH200 expose the same CPUs from both the host system and the HGX baseboard system. */
  cpuCountAcrossSystems: 'sum' | 'max';
  /** Network adapters whose model or name matches are DPUs, not NICs. */
  dpuModel: RegExp;
  paging: { followNextLink: true; pageSize?: number; fixture?: string };
  quirks: DialectQuirk[];
}


const DPU = /BlueField|\bDPU\b|^MBF\d/i;

/** What a Dell tree shows without its Manager: the root's `Oem.Dell` and `Product`, FQDD ids, the maker's name. */
const dellClues: DialectClue[] = [
  { rule: { vendor: /^Dell/i }, weight: 3 },
  { rule: { rootOem: 'Dell' }, weight: 3 },
  { rule: { product: /iDRAC|Integrated Dell Remote Access Controller/i }, weight: 3 },
  { rule: { memberId: /^(?:System|iDRAC|Enclosure|Chassis)\.Embedded\.\d+$/ }, weight: 2 },
  { rule: { systemManufacturer: /^Dell/i }, weight: 1 },
  { rule: { chassisManufacturer: /^Dell/i }, weight: 1 },
];

/** What an NVIDIA OpenBMC tree shows without its Manager: the root's `Vendor`, HGX and `_0` ids. */
const nvidiaClues: DialectClue[] = [
  { rule: { vendor: /^NVIDIA$/i }, weight: 3 },
  { rule: { memberId: /^(?:HGX_Baseboard_0|HGX_BMC_0|System_0|BMC_0)$/ }, weight: 2 },
  { rule: { systemManufacturer: /^NVIDIA/i }, weight: 1 },
];

export const dellIdrac9: RedfishDialect = {
  id: 'dell-idrac9',
  vendor: 'Dell',
  generation: 'iDRAC9 (14G-16G)',
  detect: { vendor: /^Dell/i, managerModel: /^1[4-7]G/ },
  // iDRAC's Manager model names the server generation (`14G Monolithic`): reliable without the root's Vendor.
  alsoDetect: [{ managerModel: /^1[4-7]G( |$)/, systemManufacturer: /^Dell/i }],
  clues: dellClues,
  ids: { systems: ['System.Embedded.1'], managers: ['iDRAC.Embedded.1'] },
  oemNamespaces: ['Dell'],
  firmware: {
    bmc: /iDRAC\.Embedded|Integrated Dell Remote Access Controller/,
    bios: /BIOS\.Setup|^BIOS$/,
    slotPrefixes: [
      { pattern: /^Installed-/, slot: 'installed' },
      { pattern: /^Current-/, slot: 'current' },
      { pattern: /^Previous-/, slot: 'previous' },
    ],
    versionRules: [],
  },
  gpuSources: [],
  cpuCountAcrossSystems: 'sum',
  dpuModel: DPU,
  paging: { followNextLink: true, pageSize: 50, fixture: 'redfish/dell/redfish/v1/Systems/System.Embedded.1/Oem/Dell/DellSlots?$skip=50' },
  quirks: [
    { id: 'fqdd-ids', description: 'Ids are FQDDs (System.Embedded.1, iDRAC.Embedded.1), not 1', fixture: 'redfish/dell/redfish/v1/Systems/index.json' },
    { id: 'oem-collections-paged-50', description: 'OEM collections page 50 members at a time via Members@odata.nextLink', fixture: 'redfish/dell/redfish/v1/Systems/System.Embedded.1/Oem/Dell/DellSlots/index.json' },
    { id: 'firmware-installed-current-previous', description: 'Firmware inventory lists Installed-, Current- and Previous- copies of a component (Installed-<id>-<ver>__<FQDD>)', fixture: 'redfish/dell/redfish/v1/UpdateService/FirmwareInventory/index.json' },
    { id: 'gpu-as-processor-video-slot', description: 'A PCIe GPU is a Processor with ProcessorType GPU and id Video.Slot.N-M', fixture: 'redfish/dell/redfish/v1/Systems/System.Embedded.1/Processors/Video.Slot.2-1/index.json' },
    { id: 'session-limit-503-rac0218', description: 'A full session table answers 503 Base.GeneralError with RAC0218 in ExtendedInfo, not 429', fixture: 'redfish-errors/dell-idrac-503-session-limit-RAC0218-IDRAC.2.4.json' },
    { id: 'max-concurrent-sessions-on-manager', description: 'The only session-limit hint is Manager CommandShell/GraphicalConsole MaxConcurrentSessions', fixture: 'redfish/dell_multi_dpu/redfish/v1/Managers/iDRAC.Embedded.1/index.json' },
  ],
};

export const dellIdrac8: RedfishDialect = {
  ...dellIdrac9,
  id: 'dell-idrac8',
  generation: 'iDRAC8 (12G/13G)',
  detect: { vendor: /^Dell/i, managerModel: /^1[23]G/ },
  alsoDetect: [{ managerModel: /^1[23]G( |$)/, systemManufacturer: /^Dell/i }],
  // Without its Manager, an iDRAC 8 is a Dell tree that speaks Redfish 1.0 (iDRAC9 started at 1.4).
  clues: [...dellClues, { rule: { redfishVersion: /^1\.[0-3]\./, memberId: /^(?:System|iDRAC)\.Embedded\.\d+$/ }, weight: 1 }],
  quirks: [
    { id: 'no-root-vendor', description: 'The service root has no Vendor (Redfish 1.0.x); the Manager model says the generation (13G Modular)', fixture: 'redfish-partial/dell_idrac8_m630/redfish/v1/Managers/iDRAC.Embedded.1/index.json' },
    { id: 'sessions-at-root', description: 'Links.Sessions is /redfish/v1/Sessions, not under SessionService', fixture: 'redfish-partial/dell_idrac8_m630/redfish/v1/index.json' },
    { id: 'session-create-405', description: 'Some firmware answers 405 to POST SessionService/Sessions; basic auth is the fallback', fixture: 'redfish-errors/dell-idrac8-405-session-create-not-allowed.json' },
  ],
};

export const hpeIlo5: RedfishDialect = {
  id: 'hpe-ilo5',
  vendor: 'HPE',
  generation: 'iLO 5 (Gen10/Gen10 Plus)',
  detect: { vendor: /^HPE?$/i, managerModel: /^iLO 5/ },
  alsoDetect: [{ managerFirmware: /^iLO 5 / }],
  clues: [
    { rule: { vendor: /^HPE?$/i }, weight: 3 },
    { rule: { rootOem: 'Hpe' }, weight: 3 },
    { rule: { product: /ProLiant|Synergy|Apollo/i }, weight: 3 },
    { rule: { systemManufacturer: /^HPE?$/i }, weight: 1 },
  ],
  ids: { systems: ['1'], managers: ['1'] },
  oemNamespaces: ['Hpe', 'Hp'],
  firmware: {
    bmc: /^iLO/,
    bios: /^System ROM$/,
    slotPrefixes: [],
    versionRules: [...(dialectVersionRules['hpe-ilo5'] ?? [])],
  },
  gpuSources: [],
  cpuCountAcrossSystems: 'sum',
  dpuModel: DPU,
  paging: { followNextLink: true },
  quirks: [
    { id: 'trailing-slash-ids', description: '@odata.id values end with a slash (/redfish/v1/systems/1/bios/) and use a lowercase systems path', fixture: 'redfish/hpe/redfish/v1/systems/1/bios/index.json' },
    { id: 'weak-etags', description: '@odata.etag values are weak (W/"...")', fixture: 'redfish/hpe/redfish/v1/UpdateService/FirmwareInventory/1/index.json' },
    { id: 'legacy-thermal-power-only', description: 'Only legacy Thermal and Power, no Sensors collection', fixture: 'redfish/hpe/redfish/v1/Chassis/1/Thermal/index.json' },
    { id: 'ilo-version-spellings', description: 'The BMC version is "2.72 Sep 04 2022" in FirmwareInventory and "iLO 5 v2.72" on the Manager', fixture: 'redfish/hpe/redfish/v1/UpdateService/FirmwareInventory/1/index.json' },
    { id: 'no-valid-session-bare-message-id', description: '401 bodies carry only a MessageId (Base.1.4.NoValidSession), no Message or Severity', fixture: 'redfish-errors/hpe-ilo5-401-NoValidSession.json' },
  ],
};

export const supermicroX13: RedfishDialect = {
  id: 'supermicro-x13',
  vendor: 'Supermicro',
  generation: 'X13 (ASPEED BMC 11.x)',
  detect: { rootOem: 'Supermicro' },
  clues: [
    { rule: { vendor: /^Supermicro/i }, weight: 3 },
    { rule: { systemManufacturer: /^Supermicro/i }, weight: 1 },
  ],
  ids: { systems: ['1'], managers: ['1'] },
  oemNamespaces: ['Supermicro'],
  firmware: {
    bmc: /^BMC$/,
    bios: /^BIOS$/,
    slotPrefixes: [
      { pattern: /^Golden_/, slot: 'golden' },
      { pattern: /^Staging_/, slot: 'staging' },
      { pattern: /^Backup_/, slot: 'backup' },
    ],
    versionRules: [...(dialectVersionRules['supermicro-x13'] ?? [])],
  },
  gpuSources: [{ kind: 'pcie-device', id: /^GPU\d+$/ }],
  cpuCountAcrossSystems: 'sum',
  dpuModel: DPU,
  paging: { followNextLink: true },
  quirks: [
    { id: 'root-without-vendor', description: 'ServiceRoot has no Vendor or Product; Oem.Supermicro is the only mark', fixture: 'redfish/supermicro/redfish/v1/index.json' },
    { id: 'gpus-as-pcie-devices', description: 'HGX GPUs are Chassis/1/PCIeDevices/GPUn, not Processors', fixture: 'redfish/supermicro/redfish/v1/Chassis/1/PCIeDevices/GPU1/index.json' },
    { id: 'golden-staging-backup-firmware', description: 'Firmware inventory lists Golden_, Staging_ and Backup_ copies; absent copies say "Not Present"', fixture: 'redfish/supermicro/redfish/v1/UpdateService/FirmwareInventory/index.json' },
    { id: 'bios-version-with-date', description: 'BIOS inventory version is "BIOS Date: 08/04/2023 Ver 1.4" while the System says "1.4"', fixture: 'redfish/supermicro/redfish/v1/UpdateService/FirmwareInventory/BIOS/index.json' },
    { id: 'components-without-status', description: 'Some chassis (UBB_1, the storage backplane) have no Status', fixture: 'redfish/supermicro/redfish/v1/Chassis/UBB_1/index.json' },
  ],
};

const nvidiaVersionRules: VersionRule[] = [...(dialectVersionRules['nvidia-openbmc-gb200'] ?? [])];

const nvidiaQuirks: DialectQuirk[] = [
  { id: 'root-without-oem', description: 'ServiceRoot has no Oem and no @odata.context', fixture: 'redfish/nvidia_gb200/redfish/v1/index.json' },
  { id: 'manager-oem-uptime', description: 'Manager Oem carries OpenBmc links and a bare UptimeSeconds that changes on every read', fixture: 'redfish/nvidia_gh200/redfish/v1/Managers/BMC_0/index.json' },
  { id: 'status-conditions', description: 'Status carries Conditions (LogEntry-like) explaining a non-OK health', fixture: 'redfish/nvidia_gb200/redfish/v1/Chassis/HGX_CPU_0/index.json' },
];

export const nvidiaGb200: RedfishDialect = {
  id: 'nvidia-openbmc-gb200',
  vendor: 'NVIDIA',
  generation: 'GB200 NVL compute tray (OpenBMC GB200Nvl-*)',
  detect: { vendor: /^NVIDIA$/i, product: /GB200/ },
  clues: [...nvidiaClues, { rule: { product: /GB200/ }, weight: 3 }],
  ids: { systems: ['System_0', 'HGX_Baseboard_0'], managers: ['BMC_0', 'HGX_BMC_0'], primarySystem: /^System_0$/ },
  // OpenBmc holds certificate and fan-controller links; UptimeSeconds sits directly under Oem on GH200 and changes
  // on every read, so reporting it as unrecognized would make every observation look new.
  oemNamespaces: ['Nvidia', 'OpenBmc', 'UptimeSeconds'],
  firmware: { bmc: /^FW_BMC_0$/, bios: /^UEFI$/, slotPrefixes: [], versionRules: nvidiaVersionRules },
  gpuSources: [{ kind: 'chassis', id: /^HGX_GPU_\d+$/ }],
  cpuCountAcrossSystems: 'max',
  dpuModel: DPU,
  paging: { followNextLink: true },
  quirks: [
    ...nvidiaQuirks,
    { id: 'two-systems-two-managers', description: 'Host System_0/BMC_0 and HGX_Baseboard_0/HGX_BMC_0 on one BMC; CPUs appear in both systems', fixture: 'redfish/nvidia_gb200/redfish/v1/Systems/index.json' },
    { id: 'hgx-bmc-starting-critical', description: 'HGX_BMC_0 reports State Starting with Health Critical but HealthRollup OK; manager health is a condition, not the node rollup', fixture: 'redfish/nvidia_gb200/redfish/v1/Managers/HGX_BMC_0/index.json' },
    { id: 'cpld-version-hex-bytes', description: 'CPLD versions are byte lists ("0x00 0x0b 0x03 0x04")', fixture: 'redfish/nvidia_gb200/redfish/v1/UpdateService/FirmwareInventory/FW_CPLD_0/index.json' },
    { id: 'sensors-only', description: 'No legacy Thermal/Power; readings only in Chassis/*/Sensors', fixture: 'redfish/nvidia_gb200/redfish/v1/Chassis/BMC_0/Sensors/index.json' },
    { id: 'host-system-identity-on-chassis', description: 'System_0 has no Manufacturer/Model/SerialNumber; they are on its Links.Chassis (BMC_0)', fixture: 'redfish/nvidia_gb200/redfish/v1/Systems/System_0/index.json' },
  ],
};

export const nvidiaGh200: RedfishDialect = {
  ...nvidiaGb200,
  id: 'nvidia-openbmc-gh200',
  generation: 'GH200 (OpenBMC GH200-*)',
  detect: { vendor: /^NVIDIA$/i, managerFirmware: /^GH200-/ },
  clues: [{ rule: { product: /GH200/ }, weight: 3 }],
  firmware: {
    ...nvidiaGb200.firmware,
    versionRules: [...(dialectVersionRules['nvidia-openbmc-gh200'] ?? [])],
  },
  quirks: [
    ...nvidiaQuirks,
    { id: 'gpus-on-hgx-chassis', description: 'GPUs read from Chassis HGX_GPU_n (Processors members are absent from the capture)', fixture: 'redfish/nvidia_gh200/redfish/v1/Chassis/HGX_GPU_0/index.json' },
    { id: 'duplicate-collection-member', description: 'FirmwareInventory lists HGX_FW_FPGA_0 twice (20 links, 19 components); members are de-duplicated', fixture: 'redfish/nvidia_gh200/redfish/v1/UpdateService/FirmwareInventory/index.json' },
    { id: 'version-padding', description: 'Versions are padded with spaces ("96.00.A6.00.01  ")', fixture: 'redfish/nvidia_gh200/redfish/v1/UpdateService/FirmwareInventory/HGX_FW_GPU_0/index.json' },
    { id: 'product-is-board-number', description: 'ServiceRoot Product is P3809 (shared with the NVLink switch tray), so detection uses the manager firmware', fixture: 'redfish/nvidia_gh200/redfish/v1/index.json' },
  ],
};

export const nvidiaNvswitch: RedfishDialect = {
  ...nvidiaGb200,
  id: 'nvidia-openbmc-nvswitch',
  generation: 'NVLink switch tray (OpenBMC 88.*)',
  detect: { vendor: /^NVIDIA$/i, managerFirmware: /^\d{2}\.\d{4}\.\d{4}$/ },
  clues: [...nvidiaClues, { rule: { memberId: /^MGX_/ }, weight: 2 }],
  ids: { systems: ['System_0'], managers: ['BMC_0'], primarySystem: /^System_0$/ },
  firmware: { bmc: /^MGX_FW_BMC_0$/, slotPrefixes: [], versionRules: nvidiaVersionRules },
  gpuSources: [],
  cpuCountAcrossSystems: 'sum',
  quirks: [
    ...nvidiaQuirks,
    { id: 'mgx-prefixed-ids', description: 'Chassis and firmware ids are MGX_* (MGX_NVSwitch_0, MGX_FW_BMC_0)', fixture: 'redfish/nvidia_gbswitch/redfish/v1/UpdateService/FirmwareInventory/index.json' },
  ],
};

export const nvidiaBluefield: RedfishDialect = {
  ...nvidiaGb200,
  id: 'nvidia-bluefield-bmc',
  generation: 'BlueField-3 DPU BMC (OpenBMC BF-*)',
  detect: { managerFirmware: /^BF-/ },
  clues: [
    { rule: { memberId: /^Bluefield(?:_BMC)?$/ }, weight: 2 },
    { rule: { systemManufacturer: /mellanox/i }, weight: 1 },
  ],
  ids: { systems: ['Bluefield'], managers: ['Bluefield_BMC'] },
  firmware: { bmc: /^BMC_Firmware$/, bios: /^DPU_UEFI$/, slotPrefixes: [{ pattern: /^golden_/, slot: 'golden' }], versionRules: [] },
  gpuSources: [],
  cpuCountAcrossSystems: 'sum',
  quirks: [
    ...nvidiaQuirks,
    { id: 'manufacturer-is-url', description: 'System Manufacturer is a URL (https://www.mellanox.com); the inventory names the vendor it points to, NVIDIA (canonicalVendor)', fixture: 'redfish/nvidia_dpu/redfish/v1/Systems/Bluefield/index.json' },
    { id: 'version-not-available', description: 'Golden images report the version "version not available"', fixture: 'redfish/nvidia_dpu/redfish/v1/UpdateService/FirmwareInventory/golden_image_arm/index.json' },
  ],
};

export const hpeIlo4: RedfishDialect = {
  ...hpeIlo5,
  id: 'hpe-ilo4',
  generation: 'iLO 4 (Gen8/Gen9)',
  // No Vendor and no Manager model: the root's `Oem.Hp` and the Manager firmware (`iLO 4 v2.54`) say it.
  detect: { rootOem: 'Hp', managerFirmware: /^iLO 4 / },
  alsoDetect: [],
  clues: [{ rule: { rootOem: 'Hp' }, weight: 3 }],
  quirks: [
    { id: 'oem-hp-namespace', description: 'OEM data under Oem.Hp (iLO 5 uses Oem.Hpe); no ServiceRoot Vendor, no Manager Model', fixture: 'redfish-partial/hpe_ilo4_bl460c_gen9/redfish/v1/Managers/1/index.json' },
  ],
};

export const supermicroX10: RedfishDialect = {
  ...supermicroX13,
  id: 'supermicro-x10',
  generation: 'X10/X11 (ASPEED BMC 3.x)',
  // The Manager's Oem holds Supermicro's settings directly, not under a `Supermicro` namespace (SMCRAKP, FanMode).
  detect: { managerOem: 'SMCRAKP', systemManufacturer: /^Supermicro/i },
  clues: [{ rule: { managerOem: 'SMCRAKP' }, weight: 3 }],
  oemNamespaces: ['Supermicro', 'SMCRAKP', 'FanMode', 'MouseMode', 'Snooping', 'IPAccessControl', 'ActiveDirectory', 'LDAP', 'RADIUS', 'SMTP', 'SNMP', 'Syslog', 'NTP'],
  quirks: [
    { id: 'flat-oem', description: 'Manager Oem keys are settings (SMCRAKP, FanMode, ...), not a vendor namespace', fixture: 'redfish-partial/supermicro_x10dff/redfish/v1/Managers/1/index.json' },
    { id: 'zero-prefixed-uuid', description: 'The System UUID is zeros but for the last group (00000000-0000-0000-0000-0CC47AB721C4): kept, it is unique', fixture: 'redfish-partial/supermicro_x10dff/redfish/v1/Systems/1/index.json' },
  ],
};

export const amiMegarac: RedfishDialect = {
  id: 'ami-megarac',
  vendor: 'AMI (MegaRAC, OEM boards such as Gigabyte)',
  generation: 'MegaRAC SP-X',
  detect: { vendor: /^AMI$/i },
  alsoDetect: [{ rootOem: 'Ami' }],
  clues: [
    { rule: { product: /^AMI Redfish/i }, weight: 3 },
    { rule: { memberId: /^Self$/ }, weight: 2 },
  ],
  ids: { systems: ['Self'], managers: ['Self'] },
  oemNamespaces: ['Ami', 'Dre', 'Vendor', 'GBTChassisOemProperty'],
  firmware: { bmc: /^BMC|BMCImage/i, bios: /^BIOS/i, slotPrefixes: [], versionRules: [] },
  gpuSources: [],
  cpuCountAcrossSystems: 'sum',
  dpuModel: DPU,
  paging: { followNextLink: true },
  quirks: [
    { id: 'board-vendor-oem', description: 'The board vendor adds its own Oem namespace beside AMI\'s (GBTChassisOemProperty on Gigabyte)', fixture: 'redfish-more/gigabyte_ami/redfish/v1/index.json' },
  ],
};

export const intelS2600: RedfishDialect = {
  id: 'intel-s2600',
  vendor: 'Intel (server boards, also sold under other names)',
  generation: 'S2600 family (Purley)',
  detect: { managerModel: /^S2600/ },
  alsoDetect: [{ systemOem: 'Intel_RackScale' }],
  clues: [{ rule: { systemOem: 'Intel_RackScale' }, weight: 3 }],
  ids: { systems: [], managers: ['BMC'] },
  oemNamespaces: ['Intel_RackScale', 'Intel'],
  firmware: { bmc: /BMC/i, bios: /BIOS/i, slotPrefixes: [], versionRules: [] },
  gpuSources: [],
  cpuCountAcrossSystems: 'sum',
  dpuModel: DPU,
  paging: { followNextLink: true },
  quirks: [
    { id: 'rebranded-system', description: 'The System names the reseller (Cray Inc.) while the Manager model names the Intel board (S2600BPB)', fixture: 'redfish-more/intel_s2600bpb/redfish/v1/Managers/BMC/index.json' },
  ],
};

export const hpeCrayEx: RedfishDialect = {
  id: 'hpe-cray-ex',
  vendor: 'HPE',
  generation: 'Cray EX blades (nC controller, one BMC for several nodes)',
  // No Vendor, no Manager model or firmware: the node chassis' `Oem.CrayVoltageMargins` says it.
  detect: { chassisOem: 'CrayVoltageMargins' },
  clues: [{ rule: { systemManufacturer: /^(?:HPE|Cray)/i, memberId: /^Node\d$/ }, weight: 2 }],
  ids: { systems: ['Node0', 'Node1', 'Node2', 'Node3'], managers: ['BMC', 'MCU0'], primarySystem: /^Node0$/ },
  oemNamespaces: ['CrayVoltageMargins', 'Alarms', 'TriggeredAlarms'],
  firmware: { bmc: /^BMC$/, bios: /^Node0\.BIOS$/, slotPrefixes: [], versionRules: [] },
  gpuSources: [],
  cpuCountAcrossSystems: 'sum',
  dpuModel: DPU,
  paging: { followNextLink: true },
  quirks: [
    { id: 'bmc-version-in-inventory-only', description: 'The Managers (an EnclosureManager and four AuxiliaryControllers) carry no Model or FirmwareVersion; the BMC version is FirmwareInventory/BMC', fixture: 'redfish-more/hpe_cray_ex4252/redfish/v1/Managers/BMC/index.json' },
    { id: 'one-bmc-four-nodes', description: 'One BMC serves four Systems (Node0..Node3), each with its own BIOS in the firmware inventory', fixture: 'redfish-more/hpe_cray_ex4252/redfish/v1/UpdateService/FirmwareInventory/index.json' },
  ],
};

/** The standard-schema path for vendors with no record: nothing assumed beyond DMTF Redfish. */
export const genericDialect: RedfishDialect = {
  id: 'generic',
  vendor: 'unknown',
  generation: 'DMTF Redfish standard schema',
  detect: {},
  clues: [],
  ids: { systems: [], managers: [] },
  oemNamespaces: [],
  firmware: { slotPrefixes: [], versionRules: [] },
  gpuSources: [],
  cpuCountAcrossSystems: 'sum',
  dpuModel: DPU,
  paging: { followNextLink: true },
  quirks: [],
};

/** Every dialect record, most specific first; `generic` is the fallback and always last. */
export const redfishDialects: readonly RedfishDialect[] = [
  dellIdrac9,
  dellIdrac8,
  hpeIlo5,
  hpeIlo4,
  supermicroX13,
  supermicroX10,
  amiMegarac,
  intelS2600,
  hpeCrayEx,
  nvidiaGb200,
  nvidiaGh200,
  nvidiaNvswitch,
  nvidiaBluefield,
  genericDialect,
];

/** What detection looks at: the service root, the first manager, the first system and the first chassis. */
export interface DialectFingerprint {
  vendor?: string;
  product?: string;
  rootOemKeys: string[];
  managerModel?: string;
  managerFirmware?: string;
  managerOemKeys?: string[];
  systemManufacturer?: string;
  systemOemKeys?: string[];
  chassisManufacturer?: string;
  /** The `Oem` keys of every chassis. */
  chassisOemKeys?: string[];
  redfishVersion?: string;
  /** Ids (and last path segments) of every system, manager and chassis read or listed. */
  memberIds?: string[];
}

function ruleHolds(rule: DetectRule, fingerprint: DialectFingerprint): boolean {
  const conditions = [
    rule.vendor ? rule.vendor.test(fingerprint.vendor ?? '') : undefined,
    rule.product ? rule.product.test(fingerprint.product ?? '') : undefined,
    rule.rootOem ? fingerprint.rootOemKeys.includes(rule.rootOem) : undefined,
    rule.managerModel ? rule.managerModel.test(fingerprint.managerModel ?? '') : undefined,
    rule.managerFirmware ? rule.managerFirmware.test(fingerprint.managerFirmware ?? '') : undefined,
    rule.managerOem ? (fingerprint.managerOemKeys ?? []).includes(rule.managerOem) : undefined,
    rule.systemManufacturer ? rule.systemManufacturer.test(fingerprint.systemManufacturer ?? '') : undefined,
    rule.systemOem ? (fingerprint.systemOemKeys ?? []).includes(rule.systemOem) : undefined,
    rule.chassisManufacturer ? rule.chassisManufacturer.test(fingerprint.chassisManufacturer ?? '') : undefined,
    rule.chassisOem ? (fingerprint.chassisOemKeys ?? []).includes(rule.chassisOem) : undefined,
    rule.redfishVersion ? rule.redfishVersion.test(fingerprint.redfishVersion ?? '') : undefined,
    rule.memberId ? (fingerprint.memberIds ?? []).some((id) => rule.memberId!.test(id)) : undefined,
  ].filter((value): value is boolean => value !== undefined);
  return conditions.length > 0 && conditions.every(Boolean);
}

/**
 * The dialect a fingerprint shows, strongest evidence first: the first record whose `detect` (or one of its
 * `alsoDetect` rules) holds in full; else the record whose `clues` weigh most (the first listed on a tie), so a
 * partial tree whose Manager could not be read (root `Product`, `Oem.Dell`, FQDD ids) still reads as Dell; `generic`
 * when nothing points anywhere.
 */
export function detectDialect(fingerprint: DialectFingerprint): RedfishDialect {
  for (const dialect of redfishDialects) {
    if ([dialect.detect, ...(dialect.alsoDetect ?? [])].some((rule) => ruleHolds(rule, fingerprint))) return dialect;
  }
  let best: { dialect: RedfishDialect; weight: number } | undefined;
  for (const dialect of redfishDialects) {
    // What the root says of itself outweighs every other clue: a `Vendor` that a record's own vendor clue refuses
    // rules that record out (a reseller's tree keeps the board's ids under its own name).
    const vendorClues = (dialect.clues ?? []).filter((clue) => clue.rule.vendor !== undefined);
    if (fingerprint.vendor !== undefined && vendorClues.length > 0 && !vendorClues.some((clue) => clue.rule.vendor!.test(fingerprint.vendor!))) continue;
    const weight = (dialect.clues ?? []).reduce((sum, clue) => sum + (ruleHolds(clue.rule, fingerprint) ? clue.weight : 0), 0);
    if (weight > 0 && (!best || weight > best.weight)) best = { dialect, weight };
  }
  return best?.dialect ?? genericDialect;
}

export function dialectById(id: string): RedfishDialect | undefined {
  return redfishDialects.find((dialect) => dialect.id === id);
}
