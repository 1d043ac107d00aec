/**
 * The vendor profiles the simulator builds BMCs from, by name. Each is our own account of one vendor's and
 * generation's Redfish tree (see `bmc-profile.ts`); `generateTree` makes the tree.
 */
import type { BmcProfile } from './bmc-profile.ts';
import { dellM630Idrac8 } from './dell-m630-idrac8.ts';
import { dellR750Idrac9 } from './dell-r750-idrac9.ts';
import { dellR750Idrac9Dpu } from './dell-r750-idrac9-dpu.ts';
import { gigabyteH262AmiMegarac } from './gigabyte-h262-ami-megarac.ts';
import { hpeBl460cGen9Ilo4 } from './hpe-bl460c-gen9-ilo4.ts';
import { hpeCrayEx4252 } from './hpe-cray-ex4252.ts';
import { hpeDl385Ilo5 } from './hpe-dl385-ilo5.ts';
import { intelS2600bpb } from './intel-s2600bpb.ts';
import { nvidiaBluefield3Bmc } from './nvidia-bluefield3-bmc.ts';
import { nvidiaGb200ComputeTray } from './nvidia-gb200-compute-tray.ts';
import { nvidiaGh200 } from './nvidia-gh200.ts';
import { nvidiaNvlinkSwitchTray } from './nvidia-nvlink-switch-tray.ts';
import { supermicroSys821geX13 } from './supermicro-sys821ge-x13.ts';
import { supermicroX10dff } from './supermicro-x10dff.ts';

export type { BmcProfile } from './bmc-profile.ts';

/** Every profile, in the order a default fleet mixes them. */
export const bmcProfiles: readonly BmcProfile[] = [
  dellR750Idrac9,
  dellR750Idrac9Dpu,
  hpeDl385Ilo5,
  supermicroSys821geX13,
  nvidiaGb200ComputeTray,
  nvidiaGh200,
  nvidiaNvlinkSwitchTray,
  nvidiaBluefield3Bmc,
  gigabyteH262AmiMegarac,
  intelS2600bpb,
  hpeBl460cGen9Ilo4,
  supermicroX10dff,
  hpeCrayEx4252,
  dellM630Idrac8,
];

/** The profile named `name` (`dell`, `hpe`, ...), or undefined. */
export function bmcProfileByName(name: string): BmcProfile | undefined {
  return bmcProfiles.find((profile) => profile.name === name);
}
