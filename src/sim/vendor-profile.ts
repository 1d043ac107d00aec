/**
 * What a BMC family does under pressure, per vendor: how many sessions it serves, the body and status it answers
 * when that limit is hit (quoted from `../shared/fixtures/redfish-errors/` where a capture exists), the firmware
 * revisions found in a fleet of them, and which resources are slow.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Capture } from './capture.ts';
import { fixturesDir } from './fixtures-dir.ts';

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
}

/** The profile of a capture: family defaults, then the capture's own figures, then the caller's overrides. */
export function profileFor(capture: Capture, overrides: ProfileOverrides = {}): VendorProfile {
  const family = familyOf(capture);
  const slowest: SlowResource[] = capture.latency.slowestPath
    ? [{ pattern: `^${escapeRegExp(capture.latency.slowestPath)}$`, latencyMs: capture.latency.maximumMs }]
    : [];
  const mix = overrides.firmwareMix ??
    FIRMWARE_MIXES[capture.name] ?? [{ version: capture.firmwareVersion ?? 'unknown', share: 1 }];
  return {
    family,
    sessionLimit: overrides.sessionLimit ?? SESSION_LIMITS[family],
    sessionLimitReply: sessionLimitReply(family, capture.firmwareVersion),
    unauthorizedReply: unauthorizedReply(family),
    firmwareMix: mix,
    slowResources: overrides.slowResources ?? [...(SLOW_RESOURCES[capture.name] ?? []), ...slowest],
  };
}

function readErrorFixture(file: string): ErrorReply | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(fixturesDir(), 'redfish-errors', file), 'utf8')) as {
      _source?: { http_status?: unknown };
      body?: unknown;
    };
    const status = typeof parsed._source?.http_status === 'number' ? parsed._source.http_status : 503;
    return parsed.body === undefined ? undefined : { status, body: parsed.body, source: `redfish-errors/${file}` };
  } catch {
    return undefined;
  }
}

/** The DMTF Base registry's own message, for vendors whose real answer we have no capture of. */
const STANDARD_SESSION_LIMIT: ErrorReply = {
  status: 503,
  source: 'standard (DMTF Base.1.8 SessionLimitExceeded; no capture of this vendor)',
  body: {
    error: {
      code: 'Base.1.8.SessionLimitExceeded',
      message:
        'The session establishment failed due to the number of simultaneous sessions exceeding the limit of the implementation.',
      '@Message.ExtendedInfo': [
        {
          MessageId: 'Base.1.8.SessionLimitExceeded',
          Message:
            'The session establishment failed due to the number of simultaneous sessions exceeding the limit of the implementation.',
          Severity: 'Critical',
          Resolution: 'Reduce the number of other sessions before trying to establish the session or increase the limit of simultaneous sessions (if supported).',
        },
      ],
    },
  },
};

function sessionLimitReply(family: VendorFamily, firmware: string | undefined): ErrorReply {
  switch (family) {
    case 'dell': {
      // iDRAC9 7.x reports registry IDRAC.2.4 (check_redfish#89); older firmware IDRAC.2.1 (gofish#75).
      const newer = firmware !== undefined && Number.parseInt(firmware, 10) >= 7;
      return (
        readErrorFixture(`dell-idrac-503-session-limit-RAC0218-IDRAC.2.${newer ? 4 : 1}.json`) ?? STANDARD_SESSION_LIMIT
      );
    }
    case 'hpe': {
      // The only iLO 5 rejection on record (python-ilorest-library#101) is a 401 NoValidSession: served as is.
      return readErrorFixture('hpe-ilo5-401-NoValidSession.json') ?? STANDARD_SESSION_LIMIT;
    }
    case 'openbmc': {
      // bmcweb reports limits as a property annotation, not a top-level error (bmcweb#63); its status is not on
      // record, so it is served as 503.
      const reply = readErrorFixture('openbmc-bmcweb-property-annotation-ResourceAlreadyExists.json');
      return reply ? { ...reply, status: 503 } : STANDARD_SESSION_LIMIT;
    }
    case 'supermicro':
    case 'unknown':
      return STANDARD_SESSION_LIMIT;
    default: {
      const unreachable: never = family;
      return unreachable;
    }
  }
}

function unauthorizedReply(family: VendorFamily): ErrorReply {
  if (family === 'hpe') {
    const reply = readErrorFixture('hpe-ilo5-401-NoValidSession.json');
    if (reply) return reply;
  }
  return {
    status: 401,
    source: 'standard (DMTF Base.1.8 NoValidSession)',
    body: {
      error: {
        code: 'Base.1.8.GeneralError',
        message: 'A general error has occurred. See ExtendedInfo for more information.',
        '@Message.ExtendedInfo': [
          {
            MessageId: 'Base.1.8.NoValidSession',
            Message: 'There is no valid session established with the implementation.',
            Severity: 'Critical',
            Resolution: 'Establish a session before attempting any operations.',
          },
        ],
      },
    },
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
