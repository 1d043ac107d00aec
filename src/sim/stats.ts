/**
 * What the simulator has seen: a compact fleet aggregate (what a benchmark reads) and per-BMC detail.
 */
import type { SimBehaviour } from './behaviour.ts';
import type { BmcCounters, SimBmc } from './sim-bmc.ts';

export interface FleetStats {
  at: string;
  bmcs: number;
  dark: number;
  /** Sessions in use now, over all BMCs. */
  sessionsNow: number;
  /** The highest number of sessions any one BMC has served at once. */
  sessionsPeakMax: number;
  /** BMCs whose peak ever reached their limit. */
  bmcsAtLimit: number;
  requests: number;
  rejections: number;
  resets: number;
  notModified: number;
  /** Bytes of resource bodies sent, and of bodies 304 answers spared (conditional reads). */
  bodyBytes: number;
  bodyBytesSpared: number;
  authFailures: number;
  /** Logins refused for a wrong password (or while locked out), all BMCs, and the most on any one BMC. */
  failedLogins: number;
  failedLoginsMaxPerBmc: number;
  lockouts: number;
  /** BMCs locked out now. */
  lockedOutNow: number;
  passwordChanges: number;
  passwordChangesRefused: number;
  updates: number;
  updatesFailed: number;
  /** Requests that met another poller process's request in flight to the same BMC, and the BMCs that saw any. */
  doublePolled: number;
  bmcsDoublePolled: number;
  /** A few of those meetings, for a first look: the BMC, when, the pollers, since when the other's request was open. */
  doublePollSamples: Array<{ bmc: string; at: string; poller: string; other: string; otherOpenMs: number; path: string }>;
  faultsActive: number;
  eventsFired: number;
  /** Resident memory of the simulator process, for the memory budget (about 2 GB at 25,000 BMCs). */
  rssBytes: number;
  heapUsedBytes: number;
}

export interface BmcStats extends BmcCounters {
  id: string;
  baseUrl: string;
  dark: boolean;
  sessionsNow: number;
  sessionLimit: number;
  firmware: string;
  lockedOut: boolean;
}

export function idleTimeoutOf(bmc: SimBmc, behaviour: SimBehaviour): number {
  return behaviour.sessionIdleTimeoutMs ?? Math.max(60, bmc.capture.sessionTimeoutS ?? 1800) * 1000;
}

export function bmcStats(bmc: SimBmc, now: number, behaviour: SimBehaviour): BmcStats {
  return {
    id: bmc.id,
    baseUrl: bmc.baseUrl,
    dark: bmc.isDark(now),
    sessionsNow: bmc.sessionsInUse(now, idleTimeoutOf(bmc, behaviour)),
    sessionLimit: bmc.profile.sessionLimit,
    firmware: bmc.firmware,
    lockedOut: now < bmc.lockedUntil,
    ...bmc.counters,
  };
}

export function fleetStats(bmcs: readonly SimBmc[], now: number, behaviour: SimBehaviour, faultsActive: number, eventsFired: number): FleetStats {
  const stats: FleetStats = {
    at: new Date(now).toISOString(),
    bmcs: bmcs.length,
    dark: 0,
    sessionsNow: 0,
    sessionsPeakMax: 0,
    bmcsAtLimit: 0,
    requests: 0,
    rejections: 0,
    resets: 0,
    notModified: 0,
    bodyBytes: 0,
    bodyBytesSpared: 0,
    authFailures: 0,
    failedLogins: 0,
    failedLoginsMaxPerBmc: 0,
    lockouts: 0,
    lockedOutNow: 0,
    passwordChanges: 0,
    passwordChangesRefused: 0,
    updates: 0,
    updatesFailed: 0,
    doublePolled: 0,
    bmcsDoublePolled: 0,
    doublePollSamples: [],
    faultsActive,
    eventsFired,
    rssBytes: process.memoryUsage.rss(),
    heapUsedBytes: process.memoryUsage().heapUsed,
  };
  for (const bmc of bmcs) {
    const counters = bmc.counters;
    if (bmc.isDark(now)) stats.dark++;
    stats.sessionsNow += bmc.sessionsInUse(now, idleTimeoutOf(bmc, behaviour));
    stats.sessionsPeakMax = Math.max(stats.sessionsPeakMax, counters.sessionsPeak);
    if (counters.sessionsPeak >= bmc.profile.sessionLimit) stats.bmcsAtLimit++;
    stats.requests += counters.requests;
    stats.rejections += counters.rejections;
    stats.resets += counters.resets;
    stats.notModified += counters.notModified;
    stats.bodyBytes += counters.bodyBytes;
    stats.bodyBytesSpared += counters.bodyBytesSpared;
    stats.authFailures += counters.authFailures;
    stats.lockouts += counters.lockouts;
    stats.failedLogins += counters.failedLogins;
    stats.failedLoginsMaxPerBmc = Math.max(stats.failedLoginsMaxPerBmc, counters.failedLogins);
    if (now < bmc.lockedUntil) stats.lockedOutNow++;
    stats.passwordChanges += counters.passwordChanges;
    stats.passwordChangesRefused += counters.passwordChangesRefused;
    stats.updates += counters.updates;
    stats.updatesFailed += counters.updatesFailed;
    stats.doublePolled += counters.doublePolled;
    if (counters.doublePolled > 0) stats.bmcsDoublePolled++;
    for (const meeting of bmc.doublePolls ?? []) {
      if (stats.doublePollSamples.length < 20) stats.doublePollSamples.push({ bmc: bmc.id, at: new Date(meeting.at).toISOString(), poller: meeting.poller, other: meeting.other, otherOpenMs: meeting.at - meeting.otherSince, path: meeting.path });
    }
  }
  return stats;
}
