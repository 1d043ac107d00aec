/**
 * Liveness of one node as a pure state machine over what the ledger records: registrations, poll outcomes,
 * maintenance windows and decommissions. Absence is a state of its own: a node that never answered is
 * `never-contacted`, not dark; silence inside a maintenance window is `maintenance`; a decommissioned node's
 * silence is nobody's alarm. A node becomes `dark` only after `darkAfterMisses` consecutive misses, and leaves
 * it only after `recoverAfterSuccesses` consecutive contacts (hysteresis). Gaps are explicit intervals from the
 * last contact to the next one, never interpolated. Time comes in with the facts; nothing here reads a clock.
 */
import type { PollOutcomeKind } from '../../events/index.js';

export type LivenessStatus = 'never-contacted' | 'healthy' | 'late' | 'dark' | 'maintenance' | 'decommissioned';

export interface LivenessOptions {
  /** Consecutive misses before a node is dark (and alarmed). */
  darkAfterMisses: number;
  /** Consecutive contacts before a dark node is healthy again. */
  recoverAfterSuccesses: number;
  /** Expected reporting interval when the registration gives none. */
  defaultIntervalS: number;
}

export const defaultLivenessOptions: LivenessOptions = { darkAfterMisses: 10, recoverAfterSuccesses: 2, defaultIntervalS: 60 };

/** A stretch of time without contact: from the last contact (or the registration) to the next contact. */
export interface LivenessGap {
  gapId: string;
  nodeId: string;
  /** Where the node was when the gap started. */
  site: string | null;
  rack: string | null;
  startAt: number;
  endAt: number | null;
  misses: number;
  wentDark: boolean;
  endedBy: 'contact' | 'decommissioned' | null;
}

export interface NodeLiveness {
  nodeId: string;
  site: string | null;
  rack: string | null;
  expectedIntervalS: number;
  status: LivenessStatus;
  registeredAt: number | null;
  lastContactAt: number | null;
  lastOutcomeAt: number | null;
  consecutiveMisses: number;
  consecutiveSuccesses: number;
  /** When the node was found dark (the poll that reached the threshold), while it is dark. */
  darkSince: number | null;
  latched: boolean;
  maintenanceFrom: number | null;
  maintenanceUntil: number | null;
  gapCount: number;
  openGap: LivenessGap | null;
}

export type LivenessFact =
  | { kind: 'registered'; at: number; site: string; rack: string; expectedIntervalS: number }
  | { kind: 'outcome'; at: number; outcome: PollOutcomeKind }
  | { kind: 'maintenance'; at: number; from: number; until: number }
  | { kind: 'decommissioned'; at: number };

/** A sustained change worth an alarm, produced by `evolveLiveness`. */
export type LivenessTransition =
  | { kind: 'went-dark'; nodeId: string; at: number; lastContactAt: number | null; consecutiveMisses: number }
  | { kind: 'recovered'; nodeId: string; at: number; darkSince: number | null; consecutiveSuccesses: number }
  | { kind: 'dark-cleared'; nodeId: string; at: number; reason: 'maintenance' | 'decommissioned' };

export interface LivenessStep {
  state: NodeLiveness;
  transitions: LivenessTransition[];
  /** Gaps opened, extended or closed by this fact (their latest form). */
  gaps: LivenessGap[];
}

export function initialLiveness(nodeId: string, options: LivenessOptions = defaultLivenessOptions): NodeLiveness {
  return {
    nodeId,
    site: null,
    rack: null,
    expectedIntervalS: options.defaultIntervalS,
    status: 'never-contacted',
    registeredAt: null,
    lastContactAt: null,
    lastOutcomeAt: null,
    consecutiveMisses: 0,
    consecutiveSuccesses: 0,
    darkSince: null,
    latched: false,
    maintenanceFrom: null,
    maintenanceUntil: null,
    gapCount: 0,
    openGap: null,
  };
}

const contacts: ReadonlySet<PollOutcomeKind> = new Set(['success', 'not-modified']);

function inMaintenance(state: NodeLiveness, at: number): boolean {
  return state.maintenanceFrom !== null && state.maintenanceUntil !== null && at >= state.maintenanceFrom && at <= state.maintenanceUntil;
}

/** The status a node has by its counters alone (outside maintenance, not decommissioned). */
function statusByCounters(state: NodeLiveness): LivenessStatus {
  if (state.darkSince !== null) return 'dark';
  if (state.lastContactAt === null) return 'never-contacted';
  return state.consecutiveMisses > 0 ? 'late' : 'healthy';
}

/** Where `advanceLiveness` reports what a fact produced: transitions in order, gaps by id in their latest form. */
export interface LivenessSink {
  transitions: LivenessTransition[];
  gaps: Map<string, LivenessGap>;
}

/** Applies one fact to one node. Pure: the input state is not modified. */
export function evolveLiveness(previous: NodeLiveness, fact: LivenessFact, options: LivenessOptions = defaultLivenessOptions): LivenessStep {
  const state: NodeLiveness = { ...previous, openGap: previous.openGap ? { ...previous.openGap } : null };
  const sink: LivenessSink = { transitions: [], gaps: new Map() };
  advanceLiveness(state, fact, options, sink);
  return { state, transitions: sink.transitions, gaps: [...sink.gaps.values()].map((gap) => ({ ...gap })) };
}

/**
 * The same rule as `evolveLiveness`, applied in place to a state the caller owns: a rebuild folds millions of
 * poll outcomes through it, and copying the state for each one would be most of the cost. Gaps reported to the
 * sink are live references: they show their latest form when the caller writes them.
 */
export function advanceLiveness(state: NodeLiveness, fact: LivenessFact, options: LivenessOptions, sink: LivenessSink): void {
  const nodeId = state.nodeId;
  switch (fact.kind) {
    case 'registered': {
      state.site = fact.site;
      state.rack = fact.rack;
      state.expectedIntervalS = fact.expectedIntervalS;
      state.registeredAt ??= fact.at;
      if (state.status === 'decommissioned') {
        state.consecutiveMisses = 0;
        state.consecutiveSuccesses = 0;
        state.darkSince = null;
        state.status = statusByCounters(state);
      }
      return;
    }
    case 'maintenance': {
      state.maintenanceFrom = fact.from;
      state.maintenanceUntil = fact.until;
      if (state.status !== 'decommissioned' && inMaintenance(state, fact.at)) enterMaintenance(state, fact.at, sink.transitions);
      return;
    }
    case 'decommissioned': {
      if (state.status === 'decommissioned') return;
      if (state.darkSince !== null) sink.transitions.push({ kind: 'dark-cleared', nodeId, at: fact.at, reason: 'decommissioned' });
      if (state.openGap) {
        state.openGap.endAt = fact.at;
        state.openGap.endedBy = 'decommissioned';
        sink.gaps.set(state.openGap.gapId, state.openGap);
        state.openGap = null;
      }
      state.status = 'decommissioned';
      state.darkSince = null;
      state.consecutiveMisses = 0;
      state.consecutiveSuccesses = 0;
      return;
    }
    case 'outcome': {
      if (state.status === 'decommissioned') return;
      state.lastOutcomeAt = state.lastOutcomeAt === null || fact.at > state.lastOutcomeAt ? fact.at : state.lastOutcomeAt;
      const maintenance = state.maintenanceFrom !== null && inMaintenance(state, fact.at);
      if (!maintenance && state.maintenanceUntil !== null && fact.at > state.maintenanceUntil) {
        // The window is over: counting starts afresh from here.
        state.maintenanceFrom = null;
        state.maintenanceUntil = null;
        state.consecutiveMisses = 0;
      }
      const outcome = fact.outcome;
      if (outcome === 'latched') {
        // The poller did not try (a lockout latch): neither a contact nor a miss of the node.
        state.latched = true;
      } else if (outcome === 'success' || outcome === 'not-modified') {
        state.latched = false;
        state.lastContactAt = state.lastContactAt === null || fact.at > state.lastContactAt ? fact.at : state.lastContactAt;
        state.consecutiveMisses = 0;
        state.consecutiveSuccesses += 1;
        if (state.openGap) {
          state.openGap.endAt = fact.at;
          state.openGap.endedBy = 'contact';
          sink.gaps.set(state.openGap.gapId, state.openGap);
          state.openGap = null;
        }
        if (state.darkSince !== null && state.consecutiveSuccesses >= options.recoverAfterSuccesses) {
          sink.transitions.push({ kind: 'recovered', nodeId, at: fact.at, darkSince: state.darkSince, consecutiveSuccesses: state.consecutiveSuccesses });
          state.darkSince = null;
        }
      } else {
        state.consecutiveSuccesses = 0;
        if (!maintenance) {
          state.consecutiveMisses += 1;
          // A gap starts at the last contact; a node never contacted has none to start from.
          if (!state.openGap && state.lastContactAt !== null) {
            state.gapCount += 1;
            state.openGap = { gapId: `${nodeId}#${state.gapCount}`, nodeId, site: state.site, rack: state.rack, startAt: state.lastContactAt, endAt: null, misses: 0, wentDark: false, endedBy: null };
          }
          if (state.openGap) {
            state.openGap.misses += 1;
            sink.gaps.set(state.openGap.gapId, state.openGap);
          }
          // A node never contacted is not dark: it has no contact to lose (it stays `never-contacted`).
          if (state.darkSince === null && state.lastContactAt !== null && state.consecutiveMisses >= options.darkAfterMisses) {
            state.darkSince = fact.at;
            if (state.openGap) state.openGap.wentDark = true;
            sink.transitions.push({ kind: 'went-dark', nodeId, at: fact.at, lastContactAt: state.lastContactAt, consecutiveMisses: state.consecutiveMisses });
          }
        }
      }
      state.status = maintenance ? 'maintenance' : statusByCounters(state);
      return;
    }
    default: {
      const unknown: never = fact;
      throw new Error(`unknown liveness fact ${JSON.stringify(unknown)}`);
    }
  }
}

function enterMaintenance(state: NodeLiveness, at: number, transitions: LivenessTransition[]): void {
  if (state.darkSince !== null) transitions.push({ kind: 'dark-cleared', nodeId: state.nodeId, at, reason: 'maintenance' });
  state.darkSince = null;
  state.consecutiveMisses = 0;
  state.status = 'maintenance';
}
