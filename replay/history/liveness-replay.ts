/**
 * One node's liveness replayed with the liveness projection's own rule (`advanceLiveness`), keeping where in the log
 * each silence and each dark spell began and ended. Pure: facts in, intervals out.
 *
 * A fold need not start at the beginning of the log. After `recoverAfterSuccesses` consecutive contacts the rule's
 * state no longer depends on anything before them: misses are 0, the dark mark is cleared (the last of those contacts
 * is the recovery, if the node was dark), no gap is open, and the success count only ever matters as "at least the
 * threshold" until the next miss resets it. So a replay may skip every poll outcome before the last such run (it
 * keeps every registration, maintenance window and decommission, which are few). `FoldStartFinder` finds that run,
 * reading a node's outcomes newest first. Two things make contacts not count toward it: a decommission (outcomes are
 * ignored until the node is registered again) and a re-registration after one (it resets the counters), so the run
 * may not straddle either. This assumes a node's poll times increase along the log, as the poller records them.
 */
import { advanceLiveness, initialLiveness, type LivenessFact, type LivenessOptions, type LivenessSink, type NodeLiveness } from '../../projections/index.js';

/** A liveness fact with the position of the event that carried it; a fact list is in log order. */
export interface PositionedFact {
  position: number;
  fact: LivenessFact;
}

/** A stretch without contact, from the last contact to the next one (the projection's gap), placed in the log. */
export interface SilenceRecord {
  /** The last contact before it (the gap's start). */
  lastContactAt: number;
  /** The contact that ended it; null while it lasts. */
  resumedAt: number | null;
  endedBy: 'contact' | 'decommissioned' | null;
  misses: number;
  /** Whether the node was dark at some point of it (reached the threshold in it, or was still dark from before). */
  dark: boolean;
  /** When it reached the dark threshold, if it did in this silence. */
  darkAt: number | null;
  /** When the node was healthy again after it (the recovery threshold, after `resumedAt`). */
  recoveredAt: number | null;
  firstMissPosition: number;
  darkPosition: number | null;
  endPosition: number | null;
  recoveredPosition: number | null;
}

/** A spell in the `dark` state: from the poll that reached the threshold to the recovery (or what cleared it). */
export interface DarkSpellRecord {
  lastContactAt: number | null;
  darkAt: number;
  darkPosition: number;
  consecutiveMisses: number;
  endedAt: number | null;
  endPosition: number | null;
  endedBy: 'recovered' | 'maintenance' | 'decommissioned' | null;
}

export interface NodeLivenessReplay {
  /** The rule's state after the last fact. */
  state: NodeLiveness;
  silences: SilenceRecord[];
  darkSpells: DarkSpellRecord[];
}

/** Replays one node's facts (log order) through the liveness rule. */
export function replayNodeLiveness(nodeId: string, facts: Iterable<PositionedFact>, options: LivenessOptions): NodeLivenessReplay {
  const state = initialLiveness(nodeId, options);
  const sink: LivenessSink = { transitions: [], gaps: new Map() };
  const silences: SilenceRecord[] = [];
  const byGap = new Map<string, SilenceRecord>();
  const darkSpells: DarkSpellRecord[] = [];
  let spell: DarkSpellRecord | null = null;
  let lastDarkSilence: SilenceRecord | null = null;
  for (const { position, fact } of facts) {
    sink.transitions.length = 0;
    sink.gaps.clear();
    advanceLiveness(state, fact, options, sink);
    for (const gap of sink.gaps.values()) {
      let silence = byGap.get(gap.gapId);
      if (!silence) {
        silence = { lastContactAt: gap.startAt, resumedAt: null, endedBy: null, misses: 0, dark: false, darkAt: null, recoveredAt: null, firstMissPosition: position, darkPosition: null, endPosition: null, recoveredPosition: null };
        byGap.set(gap.gapId, silence);
        silences.push(silence);
      }
      silence.misses = gap.misses;
      if (gap.endAt !== null && silence.endPosition === null) {
        silence.resumedAt = gap.endAt;
        silence.endedBy = gap.endedBy;
        silence.endPosition = position;
      }
    }
    const open = state.openGap ? byGap.get(state.openGap.gapId) : undefined;
    if (open && state.darkSince !== null) {
      open.dark = true;
      lastDarkSilence = open;
    }
    for (const transition of sink.transitions) {
      switch (transition.kind) {
        case 'went-dark':
          spell = { lastContactAt: transition.lastContactAt, darkAt: transition.at, darkPosition: position, consecutiveMisses: transition.consecutiveMisses, endedAt: null, endPosition: null, endedBy: null };
          darkSpells.push(spell);
          if (open) {
            open.darkAt = transition.at;
            open.darkPosition = position;
          }
          break;
        case 'recovered':
        case 'dark-cleared':
          if (spell) {
            spell.endedAt = transition.at;
            spell.endPosition = position;
            spell.endedBy = transition.kind === 'recovered' ? 'recovered' : transition.reason;
            spell = null;
          }
          if (transition.kind === 'recovered' && lastDarkSilence && lastDarkSilence.recoveredAt === null) {
            lastDarkSilence.recoveredAt = transition.at;
            lastDarkSilence.recoveredPosition = position;
          }
          lastDarkSilence = null;
          break;
        default: {
          const unknown: never = transition;
          throw new Error(`unknown liveness transition ${JSON.stringify(unknown)}`);
        }
      }
    }
  }
  return { state, silences, darkSpells };
}

const contacts = new Set(['success', 'not-modified']);

/**
 * Reads one node's poll outcomes newest first and says when the fold may start (see the file comment). Give it the
 * node's lifecycle facts (registrations, maintenance windows, decommissions) in log order, all of them.
 */
export class FoldStartFinder {
  readonly #threshold: number;
  /** Positions where the counters restart (decommissions, registrations), newest last. */
  readonly #boundaries: number[];
  /** Position ranges (exclusive) in which the node was decommissioned: its outcomes there are ignored by the rule. */
  readonly #ignored: Array<[number, number]>;
  #boundaryIndex: number;
  #run = 0;
  #found: number | null = null;

  constructor(lifecycle: readonly PositionedFact[], options: LivenessOptions) {
    this.#threshold = Math.max(1, options.recoverAfterSuccesses);
    this.#boundaries = lifecycle.filter((f) => f.fact.kind === 'registered' || f.fact.kind === 'decommissioned').map((f) => f.position);
    this.#boundaryIndex = this.#boundaries.length - 1;
    this.#ignored = [];
    let decommissionedAt: number | null = null;
    for (const { position, fact } of lifecycle) {
      if (fact.kind === 'decommissioned' && decommissionedAt === null) decommissionedAt = position;
      else if (fact.kind === 'registered' && decommissionedAt !== null) {
        this.#ignored.push([decommissionedAt, position]);
        decommissionedAt = null;
      }
    }
    if (decommissionedAt !== null) this.#ignored.push([decommissionedAt, Number.POSITIVE_INFINITY]);
  }

  /** The position of the oldest outcome the fold needs, once found. */
  get startPosition(): number | null {
    return this.#found;
  }

  /** Feeds the next older outcome fact; true once the fold may start at it (outcomes older than it are not needed). */
  older(outcome: PositionedFact): boolean {
    if (this.#found !== null) return true;
    if (outcome.fact.kind !== 'outcome') return false;
    while (this.#boundaryIndex >= 0 && this.#boundaries[this.#boundaryIndex]! > outcome.position) {
      this.#run = 0;
      this.#boundaryIndex -= 1;
    }
    if (this.#ignored.some(([from, until]) => outcome.position > from && outcome.position < until)) return false;
    if (outcome.fact.outcome === 'latched') return false;
    if (!contacts.has(outcome.fact.outcome)) {
      this.#run = 0;
      return false;
    }
    this.#run += 1;
    if (this.#run >= this.#threshold) this.#found = outcome.position;
    return this.#found !== null;
  }
}

/** Merges a node's lifecycle facts and outcome facts (each in log order) into one list in log order. */
export function mergeFacts(lifecycle: readonly PositionedFact[], outcomes: readonly PositionedFact[]): PositionedFact[] {
  const merged: PositionedFact[] = [];
  let i = 0;
  let j = 0;
  while (i < lifecycle.length || j < outcomes.length) {
    if (j >= outcomes.length || (i < lifecycle.length && lifecycle[i]!.position <= outcomes[j]!.position)) merged.push(lifecycle[i++]!);
    else merged.push(outcomes[j++]!);
  }
  return merged;
}
