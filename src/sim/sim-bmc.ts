/**
 * One simulated BMC: a reference to its shared capture and vendor profile, and only what differs for it (identity
 * index, credentials, firmware, sessions, faults, counters). Everything here is mutated only from the one event
 * loop of the simulator, so there is no locking.
 */
import type { Socket } from 'node:net';
import type { SimBehaviour } from './behaviour.ts';
import type { Capture } from './capture.ts';
import type { SimClock } from './clock.ts';
import type { UpdateFault } from './firmware-updates.ts';
import type { VendorProfile } from './vendor-profile.ts';
import type { BmcEvents } from './events/bmc-events.ts';
import type { Health } from './profiles/bmc-profile.ts';

/** Where a BMC sits and what feeds it. Shared by every node of a rack. */
export interface Placement {
  site: string;
  rack: string;
  pdu: string;
  tor: string;
  cdu: string;
}

export interface RedfishSession {
  id: string;
  token: string;
  userName: string;
  createdAt: number;
  lastUsedAt: number;
}

export interface UpdateTask {
  id: string;
  imageUri: string;
  /** The firmware inventory member updated, or undefined for the BMC's own firmware. */
  targetPath: string | undefined;
  version: string;
  startedAt: number;
  durationMs: number;
  willFail: boolean;
  /** Set when the task reached its end (its effect may still await activation). */
  finished: boolean;
  /** What the task will come to: applied, failed, Completed-with-Critical (nothing applied), or lost in a reset. */
  fate: 'ok' | 'fail' | 'critical' | 'reset-mid-update' | 'lost-after-running';
  status: 'OK' | 'Critical';
  endedAt?: number;
  /** Staged: the version changes at the next reset (`ComputerSystem.Reset`, or `Manager.Reset` for the BMC). */
  awaitingActivation: boolean;
  /** Purged the moment it ends (a 404 before anyone reads the outcome). */
  purgeEarly: boolean;
  /** `@Redfish.OperationApplyTime: OnReset`: staged even where the BMC would apply at once. */
  onReset: boolean;
}

export interface BmcCounters {
  requests: number;
  rejections: number;
  resets: number;
  notModified: number;
  /** Requests answered with a redirect instead of the resource (`serving: { redirect }`). */
  redirects: number;
  /** Bytes of resource bodies sent (200 answers to GET), and of bodies a matching `If-None-Match` spared (304). */
  bodyBytes: number;
  bodyBytesSpared: number;
  authFailures: number;
  /** Logins refused for a wrong password (or while locked out): what a BMC's lockout counts. */
  failedLogins: number;
  lockouts: number;
  /** Password changes the BMC took (AccountService PATCH), and the ones it refused (policy, ...). */
  passwordChanges: number;
  passwordChangesRefused: number;
  sessionsPeak: number;
  updates: number;
  updatesFailed: number;
  /** Update requests (SimpleUpdate or multipart POSTs) that reached the BMC, accepted or refused. */
  updateRequests: number;
  /**
   * Requests that arrived while another poller process (named by `x-fleet-ledger-poller`) had a request in flight to
   * this BMC: two processes polling one BMC at once, which shard leases exist to prevent.
   */
  doublePolled: number;
}

export class SimBmc {
  /** Open Redfish sessions by token; created on the first login. */
  sessions: Map<string, RedfishSession> | undefined;
  /** Basic-auth requests being answered right now: they hold a session slot on a real BMC. */
  inflightBasic = 0;
  /** Requests in flight per poller process (`x-fleet-ledger-poller`), when pollers name themselves. */
  pollersInFlight: Map<string, { count: number; since: number }> | undefined;
  /** The first few times two pollers met here: when, who came, who was there and since when (ms since the epoch). */
  doublePolls: Array<{ at: number; poller: string; other: string; otherSince: number; path: string }> | undefined;
  /** When the BMC started rejecting while at its limit; cleared when it drops below the limit. */
  saturatedSince: number | undefined;
  /** The BMC is resetting (dark) until this time. */
  resetUntil = 0;
  /** Active dark causes (faults, flapping phases); dark while above zero. */
  darkCauses = 0;
  /** Multiplies response times while a `slow` fault is active. */
  slowFactor = 1;
  consecutiveBadLogins = 0;
  lockedUntil = 0;
  /** Password changes the BMC will refuse with its policy error, injected by `password-policy` faults. */
  refusePasswordChanges = 0;
  /** The password was given back from a saved state (it is saved again, changed or not). */
  passwordRestored = false;
  /** Updates that will fail, injected by `firmware-failure` faults. */
  failingUpdates = 0;
  tasks: Map<string, UpdateTask> | undefined;
  /** The update running now, or staged and awaiting activation: one at a time. */
  activeUpdate: UpdateTask | undefined;
  /** Update faults scripted for this BMC (`update-fault`), consumed in order. */
  updateFaults: UpdateFault[] | undefined;
  /** Versions of firmware inventory members other than the BMC's own, after an update. */
  inventoryVersions: Map<string, string> | undefined;
  /** Requests held unanswered while dark, released (connection dropped) when the BMC comes back. */
  held: Set<Socket> | undefined;
  nextId = 1;
  /** The BMC's EventService and its streams, where its profile has one (`events/event-service-profiles.ts`). */
  events: BmcEvents | undefined;
  /** The system health a `health` fault set, served in its System's `Status.Health` over the tree's. */
  healthOverride: Health | undefined;
  /** Changes the BMC made to what it reports (health faults): what the ledger's push audit compares against. */
  changes = 0;
  readonly counters: BmcCounters = {
    requests: 0,
    rejections: 0,
    resets: 0,
    notModified: 0,
    redirects: 0,
    bodyBytes: 0,
    bodyBytesSpared: 0,
    authFailures: 0,
    failedLogins: 0,
    lockouts: 0,
    passwordChanges: 0,
    passwordChangesRefused: 0,
    sessionsPeak: 0,
    updates: 0,
    updatesFailed: 0,
    updateRequests: 0,
    doublePolled: 0,
  };

  readonly id: string;
  /** Index in the fleet: the identity of the BMC is derived from it. */
  readonly index: number;
  readonly capture: Capture;
  readonly profile: VendorProfile;
  readonly placement: Placement;
  username: string;
  password: string;
  /** The BMC firmware version (replaces the capture's own wherever it appears). */
  firmware: string;
  readonly firmwareStale: boolean;
  /** False for the units nobody has a record of: the EBOM generator leaves them out. */
  readonly recorded: boolean;
  /** The loopback address of the BMC in per-address and wildcard modes. */
  readonly address: string | undefined;
  /** `http://127.1.0.7:8443` or `http://127.0.0.1:8443/bmc/<id>`; set once the simulator listens. */
  baseUrl = '';
  /** `""`, or `/bmc/<id>` in path-prefix mode: put before every served link. */
  linkPrefix = '';

  constructor(init: Pick<SimBmc, 'id' | 'index' | 'capture' | 'profile' | 'placement' | 'username' | 'password' | 'firmware' | 'firmwareStale' | 'recorded' | 'address'>) {
    this.id = init.id;
    this.index = init.index;
    this.capture = init.capture;
    this.profile = init.profile;
    this.placement = init.placement;
    this.username = init.username;
    this.password = init.password;
    this.firmware = init.firmware;
    this.firmwareStale = init.firmwareStale;
    this.recorded = init.recorded;
    this.address = init.address;
  }

  /** A request from poller process `poller` begins; `done` when its answer is over. */
  notePoller(poller: string, path = '', now = Date.now()): () => void {
    this.pollersInFlight ??= new Map();
    for (const [other, held] of this.pollersInFlight) {
      if (other === poller || held.count <= 0) continue;
      this.counters.doublePolled++;
      this.doublePolls ??= [];
      if (this.doublePolls.length < 5) this.doublePolls.push({ at: now, poller, other, otherSince: held.since, path });
    }
    const mine = this.pollersInFlight.get(poller);
    if (mine) mine.count += 1;
    else this.pollersInFlight.set(poller, { count: 1, since: now });
    return () => {
      const held = this.pollersInFlight!.get(poller);
      if (!held) return;
      held.count -= 1;
      if (held.count <= 0) this.pollersInFlight!.delete(poller);
    };
  }

  isDark(now: number): boolean {
    return this.darkCauses > 0 || now < this.resetUntil;
  }

  /** Open sessions after dropping the ones idle longer than `idleTimeoutMs`. */
  openSessions(now: number, idleTimeoutMs: number): number {
    if (!this.sessions) return 0;
    for (const [token, session] of this.sessions) {
      if (now - session.lastUsedAt > idleTimeoutMs) this.sessions.delete(token);
    }
    return this.sessions.size;
  }

  /** Sessions in use: open Redfish sessions plus in-flight basic-auth requests. */
  sessionsInUse(now: number, idleTimeoutMs: number): number {
    return this.openSessions(now, idleTimeoutMs) + this.inflightBasic;
  }

  notePeak(inUse: number): void {
    if (inUse > this.counters.sessionsPeak) this.counters.sessionsPeak = inUse;
  }

  /** Called when a slot frees up: the BMC is no longer held over its limit. */
  noteRelief(now: number, idleTimeoutMs: number): void {
    if (this.saturatedSince !== undefined && this.sessionsInUse(now, idleTimeoutMs) < this.profile.sessionLimit) {
      this.saturatedSince = undefined;
    }
  }

  /**
   * Records a rejection at the limit. Returns true when the BMC has now been kept over its limit for
   * `behaviour.overloadAfterMs` and must reset.
   */
  noteRejection(now: number, behaviour: SimBehaviour): boolean {
    this.counters.rejections++;
    this.saturatedSince ??= now;
    return now - this.saturatedSince >= behaviour.overloadAfterMs;
  }

  /**
   * Resets the controller: it goes dark for `darkMs`, every session is dropped and every held connection closed
   * when it comes back. Credentials, lockout and firmware survive, as on real hardware.
   */
  reset(clock: SimClock, darkMs: number): void {
    const now = clock.now();
    this.counters.resets++;
    this.sessions?.clear();
    this.events?.forget();
    this.saturatedSince = undefined;
    this.resetUntil = Math.max(this.resetUntil, now + darkMs);
    clock.schedule(darkMs, () => this.releaseHeldIfUp(clock.now()));
  }

  /** Drops connections held while dark once the BMC answers again (a rebooted BMC has no memory of them). */
  releaseHeldIfUp(now: number): void {
    // A timer may fire a hair before the reset ends on the simulated clock; a 50 ms tolerance absorbs that.
    if (this.darkCauses > 0 || now + 50 < this.resetUntil || !this.held) return;
    for (const socket of this.held) socket.destroy();
    this.held = undefined;
  }

  hold(socket: Socket): void {
    (this.held ??= new Set()).add(socket);
    socket.once('close', () => this.held?.delete(socket));
  }
}
