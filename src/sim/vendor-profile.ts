/**
 * What a BMC family does under pressure, per vendor: how many sessions it serves, the body and status it answers
 * when that limit is hit (each vendor's own answer, see `profiles/error-bodies.ts`), the firmware
 * revisions found in a fleet of them, and which resources are slow.
 */
import type { Capture } from './capture.ts';
import type { BmcProfile } from './profiles/bmc-profile.ts';
import { standardNoValidSession, standardSessionLimit } from './profiles/error-bodies.ts';
import { bmcProfiles } from './profiles/index.ts';
import type { ServingQuirks } from './serving-quirks.ts';
import { eventServiceOfProfile, type SimEventServiceSpec } from './events/event-service-profiles.ts';

export type VendorFamily = 'dell' | 'hpe' | 'supermicro' | 'openbmc' | 'unknown';

export interface FirmwareRevision {
  version: string;
  /** Relative weight in the fleet mix. */
  share: number;
  /** A revision nobody has a record of: older than any baseline. */
  stale?: boolean;
}

export interface SlowResource {
  /** Matched against the canonical request path (a regular expression source). */
  pattern: string;
  /** Simulated response time, before the latency scale. */
  latencyMs: number;
}

export interface ErrorReply {
  status: number;
  body: unknown;
  /** Where the body comes from (a fixture file, or `standard` when no capture of it exists). */
  source: string;
}

export interface VendorProfile {
  family: VendorFamily;
  /** Concurrent sessions (Redfish sessions plus in-flight basic-auth requests) served before rejecting. */
  sessionLimit: number;
  sessionLimitReply: ErrorReply;
  /** The answer to a request without valid credentials, or while the account is locked out. */
  unauthorizedReply: ErrorReply;
  firmwareMix: FirmwareRevision[];
  slowResources: SlowResource[];
  /** How these BMCs serve their tree beyond the profile (redirects, placeholders); none by default. */
  serving?: ServingQuirks;
  /** The EventService its BMCs serve, where the real controller advertises a stream; none otherwise. */
  eventService?: SimEventServiceSpec;
}

/** The vendor family of a capture, from its folder name, else from what its service root says. */
export function familyOf(capture: Pick<Capture, 'name' | 'vendor'>): VendorFamily {
  const name = capture.name.toLowerCase();
  const vendor = (capture.vendor ?? '').toLowerCase();
  if (name.startsWith('dell') || vendor.includes('dell')) return 'dell';
  if (name.startsWith('hpe') || vendor.includes('hpe') || vendor.includes('hewlett')) return 'hpe';
  if (name.startsWith('supermicro') || vendor.includes('supermicro')) return 'supermicro';
  if (name.startsWith('nvidia') || vendor.includes('nvidia') || vendor.includes('openbmc')) return 'openbmc';
  return 'unknown';
}

/**
 * Fleet firmware mixes per capture. The captured revision is the most common; the others are real revision
 * strings of the same product lines, and the `stale` ones stand for the units nobody has a record of.
 */
const FIRMWARE_MIXES: Record<string, FirmwareRevision[]> = {
  dell: [
    { version: '6.00.30.00', share: 0.6 },
    { version: '7.10.30.00', share: 0.3 },
    { version: '5.10.50.00', share: 0.08 },
    { version: '4.40.00.00', share: 0.02, stale: true },
  ],
  dell_multi_dpu: [
    { version: '7.10.30.00', share: 0.85 },
    { version: '7.00.00.172', share: 0.13 },
    { version: '6.10.30.00', share: 0.02, stale: true },
  ],
  hpe: [
    { version: '2.72', share: 0.6 },
    { version: '3.04', share: 0.3 },
    { version: '2.44', share: 0.08 },
    { version: '2.18', share: 0.02, stale: true },
  ],
  supermicro: [
    { version: '11.01.01', share: 0.75 },
    { version: '11.00.30', share: 0.23 },
    { version: '01.01.13', share: 0.02, stale: true },
  ],
  nvidia_gb200: [
    { version: 'GB200Nvl-24.12-8', share: 0.8 },
    { version: 'GB200Nvl-25.06-4', share: 0.18 },
    { version: 'GB200Nvl-24.09-3', share: 0.02, stale: true },
  ],
  nvidia_gh200: [
    { version: 'GH200-24.05-2', share: 0.9 },
    { version: 'GH200-23.12-1', share: 0.1, stale: true },
  ],
};

const SESSION_LIMITS: Record<VendorFamily, number> = { dell: 8, hpe: 6, supermicro: 4, openbmc: 5, unknown: 4 };

/**
 * Slow resources beyond the slowest one each capture's README names (which is always added). Firmware inventory on
 * HGX-based boards walks every GPU and switch, and is modelled as taking minutes.
 */
const SLOW_RESOURCES: Record<string, SlowResource[]> = {
  nvidia_gb200: [{ pattern: '^/redfish/v1/UpdateService/FirmwareInventory$', latencyMs: 150_000 }],
  nvidia_gh200: [{ pattern: '^/redfish/v1/UpdateService/FirmwareInventory$', latencyMs: 120_000 }],
  supermicro: [{ pattern: '^/redfish/v1/UpdateService/FirmwareInventory$', latencyMs: 60_000 }],
  dell: [{ pattern: '^/redfish/v1/UpdateService/FirmwareInventory$', latencyMs: 20_000 }],
};

export interface ProfileOverrides {
  sessionLimit?: number;
  firmwareMix?: FirmwareRevision[];
  slowResources?: SlowResource[];
  serving?: ServingQuirks;
}

/**
 * How a BMC built from `capture` behaves: the vendor profile's facts (session limit, error answers, firmware mix,
 * slow resources) when there is one, else its family's defaults; then the caller's overrides. A real capture
 * with no profile of its own answers with the errors of the first profile of its family, or the DMTF standard.
 */
export function profileFor(capture: Capture, source: BmcProfile | undefined, overrides: ProfileOverrides = {}): VendorProfile {
  const family = source?.family ?? familyOf(capture);
  const kin = source ?? bmcProfiles.find((profile) => profile.family === family);
  const slowest: SlowResource[] = capture.latency.slowestPath
    ? [{ pattern: `^${escapeRegExp(capture.latency.slowestPath)}$`, latencyMs: capture.latency.maximumMs }]
    : [];
  const mix = overrides.firmwareMix ?? source?.bmcFirmware.mix ?? [{ version: capture.firmwareVersion ?? 'unknown', share: 1 }];
  return {
    family,
    sessionLimit: overrides.sessionLimit ?? source?.sessions.limit ?? SESSION_LIMITS[family],
    sessionLimitReply: kin?.errors.sessionLimit ?? standardSessionLimit(),
    unauthorizedReply: kin?.errors.unauthorized ?? standardNoValidSession(),
    firmwareMix: mix,
    slowResources: overrides.slowResources ?? [...(source?.slowResources ?? []), ...slowest],
    ...(overrides.serving ? { serving: overrides.serving } : {}),
    ...eventServiceEntry(source?.name),
  };
}

function eventServiceEntry(name: string | undefined): { eventService?: SimEventServiceSpec } {
  const eventService = eventServiceOfProfile(name);
  return eventService ? { eventService } : {};
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
