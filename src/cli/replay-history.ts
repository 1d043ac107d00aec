/**
 * `fleet-ledger replay timeline NODE` and `fleet-ledger replay diff --from T1 --to T2`: the fleet's history through
 * the API (an analyst, auditor or operator token), printed for an operator or, with --json, as the API answered.
 * `argv` is what follows the verb.
 */
import type { FleetDiff, NodeTimeline, Silence, TimelineEntry } from '../../replay/history/index.js';
import { callApi, connectionOf, connectionUsage, exitCodes, output, parseCommandArgs, required, runApiCommand, UsageError } from './api-client.js';

const when = 'an RFC 3339 instant (2026-12-01T03:00:00Z) or a log position';

const timelineUsage = `usage: fleet-ledger replay timeline NODE [--from WHEN] [--to WHEN] [--limit N] [--json]

  one node's history in log order: every event about it (intents with who asked), its silences as intervals
  (dark or late, from the last contact to the contact that ended them) and its alarms

  --from WHEN    start of the window, exclusive (default: the beginning of the log); WHEN is ${when}
  --to WHEN      end of the window, inclusive (default: the head)
  --limit N      most entries (default 10000)
${connectionUsage}
`;

const diffUsage = `usage: fleet-ledger replay diff --from WHEN [--to WHEN] [--limit N] [--first-reads] [--json]

  what changed between two points of the log, transitions of meaning first: nodes that went dark and recovered (or
  are still dark), alarms, drift opened and closed, firmware that changed version, rollout steps, every intent with
  who asked, then nodes joined, left or moved; firmware read for the first time is counted in one line

  --from WHEN    start of the window, exclusive; WHEN is ${when}
  --to WHEN      end of the window, inclusive (default: the head)
  --limit N      most items per list (default 10000; counts are whole)
  --first-reads  list the first reads of firmware too (a node's first inventory: no version before the window)
${connectionUsage}
`;

const windowOptions = { from: { type: 'string' }, to: { type: 'string' }, limit: { type: 'string' } } as const;

function limitOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(text)) throw new UsageError(`--limit must be a positive whole number, got '${text}'`);
  return Number(text);
}

/** Every instant in an answer (the values of `at` and `…At` fields, and of silences' `from` and `to`). */
function instantsIn(value: unknown, key = '', into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) instantsIn(item, key, into);
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) instantsIn(v, k, into);
  else if (typeof value === 'string' && /^(at|from|to)$|At$/.test(key) && /^\d{4}-\d{2}-\d{2}T/.test(value)) into.push(value);
  return into;
}

/** Times as people read them: the time of day when everything shown is on one UTC day, else date and time. */
class Clock {
  readonly #oneDay: boolean;

  constructor(answer: unknown) {
    const days = new Set(instantsIn(answer).map((t) => t.slice(0, 10)));
    this.#oneDay = days.size <= 1;
  }

  at(instant: string | null | undefined): string {
    if (!instant) return '-';
    const text = new Date(instant).toISOString();
    return this.#oneDay ? text.slice(11, 19) : `${text.slice(0, 10)} ${text.slice(11, 19)}`;
  }
}

/** A duration as people say it: 45 s, 28 min, 3.5 h, 2.1 d. */
export function spoken(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 120 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}

function fullInstant(instant: string | null): string {
  return instant ? `${instant.slice(0, 10)} ${instant.slice(11, 19)}Z` : 'the beginning';
}

function windowLine(window: { from: { position: number; at: string | null }; to: { position: number; at: string | null } }): string {
  return `positions ${window.from.position} → ${window.to.position} (${fullInstant(window.from.at)} → ${fullInstant(window.to.at)})`;
}

function who(by: string, role: string | null): string {
  return role ? `by ${by} (${role})` : `by ${by}`;
}

const contacts = new Set(['success', 'not-modified']);

/** Runs of poll entries in which the node answered every time (or never) collapse into one line. */
function timelineLines(entries: readonly TimelineEntry[], clock: Clock): string[] {
  const lines: string[] = [];
  const line = (position: number, time: string, text: string): void => void lines.push(`${String(position).padStart(9)}  ${time.padEnd(clock.at(entries[0]?.recordedAt).length)}  ${text}`);
  let i = 0;
  while (i < entries.length) {
    const entry = entries[i]!;
    const polls = entry.polls ?? [];
    const answered = polls.length > 0 && polls.every((p) => contacts.has(p.outcome));
    const missed = polls.length > 0 && polls.every((p) => !contacts.has(p.outcome) && p.outcome !== 'latched');
    if (answered || missed) {
      let j = i + 1;
      const run = [...polls];
      while (j < entries.length) {
        const next = entries[j]!.polls ?? [];
        const same = next.length > 0 && (answered ? next.every((p) => contacts.has(p.outcome)) : next.every((p) => !contacts.has(p.outcome) && p.outcome !== 'latched'));
        if (!same) break;
        run.push(...next);
        j += 1;
      }
      if (run.length > 1) {
        const kinds = [...new Set(run.map((p) => p.outcome))].join(', ');
        line(entry.position, clock.at(run[0]!.at), `polls: ${run.length} ${answered ? 'answered' : `missed (${kinds})`}, ${clock.at(run[0]!.at)} → ${clock.at(run[run.length - 1]!.at)}`);
        i = j;
        continue;
      }
    }
    const time = clock.at(polls[0]?.at ?? entry.observedAt ?? entry.recordedAt);
    line(entry.position, time, entry.actor ? `${who(entry.actor.id, entry.actor.role)}: ${entry.summary}` : entry.summary);
    i += 1;
  }
  return lines;
}

function silenceLine(silence: Silence, clock: Clock): string {
  const end = silence.to ? clock.at(silence.to) : silence.kind === 'dark' ? 'still dark' : 'still silent';
  const details = [`${spoken(silence.durationMs)}`, `${silence.misses} missed`];
  if (silence.darkAt) details.push(`dark at ${clock.at(silence.darkAt)}`);
  if (silence.endedBy === 'decommissioned') details.push('ended by decommission');
  if (silence.recoveredAt) details.push(`healthy again ${clock.at(silence.recoveredAt)}`);
  return `  ${silence.kind} ${clock.at(silence.from)} → ${end} (${details.join(', ')})`;
}

export function formatTimeline(timeline: NodeTimeline): string {
  const clock = new Clock(timeline);
  const live = timeline.liveness;
  const place = live.site ? ` (${live.site}/${live.rack ?? '-'})` : '';
  const state =
    live.status === 'dark'
      ? `dark since ${clock.at(live.darkSince)}, last contact ${clock.at(live.lastContactAt)}, ${live.consecutiveMisses} missed in a row`
      : `${live.status}${live.lastContactAt ? `, last contact ${clock.at(live.lastContactAt)}` : ''}${live.consecutiveMisses > 0 ? `, ${live.consecutiveMisses} missed in a row` : ''}`;
  const out = [
    `${timeline.nodeId}${place}: ${windowLine(timeline.window)}, times UTC`,
    `at the end of the window: ${state}`,
    '',
    `${'position'.padStart(9)}  ${'time'.padEnd(clock.at(timeline.window.to.at).length)}  event`,
    ...timelineLines(timeline.entries, clock),
  ];
  if (timeline.entries.length === 0) out.push('  (no events in the window)');
  if (timeline.truncated) out.push(`  … ${timeline.truncated.omitted} more events: ask again with --from ${timeline.truncated.nextFrom}`);
  out.push('', `silences (${timeline.silences.length}):`, ...(timeline.silences.length > 0 ? timeline.silences.map((s) => silenceLine(s, clock)) : ['  none']));
  out.push('', `alarms (${timeline.alarms.length}):`);
  for (const alarm of timeline.alarms) {
    const closed = alarm.closedAt ? `closed ${clock.at(alarm.closedAt)}` : 'still open';
    const ack = alarm.acknowledgedBy ? `, acknowledged by ${alarm.acknowledgedBy} ${clock.at(alarm.acknowledgedAt)}` : '';
    out.push(`  ${alarm.kind} ${alarm.severity} ${alarm.alarmId}: opened ${clock.at(alarm.openedAt)} (position ${alarm.openedPosition}), ${closed}${ack}: ${alarm.summary}`);
  }
  if (timeline.alarms.length === 0) out.push(timeline.alarmSource.available ? '  none' : '  (the alarms read model is not built here)');
  else if (!timeline.alarmSource.complete) out.push(`  (the alarms read model had applied the log only through position ${timeline.alarmSource.throughPosition ?? 0})`);
  return `${out.join('\n')}\n`;
}

/** What `formatDiff` prints beside the transitions: the first reads of firmware are counted in one line unless asked for. */
export interface DiffFormat {
  firstReads: boolean;
}

/** `5864 (BMC 2000, BIOS 2000, ...)`: a count and its components, largest first. */
function byComponent(changes: ReadonlyArray<{ component: string }>): string {
  const counts = new Map<string, number>();
  for (const change of changes) counts.set(change.component, (counts.get(change.component) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([component, n]) => `${component} ${n}`).join(', ');
}

/**
 * A fleet diff for people: transitions of meaning first (nodes that went dark or recovered, alarms, drift, firmware
 * that changed version, rollouts, intents), then membership; firmware read for the first time (no version before the
 * window: a node's first inventory, not a change) is one line of counts unless `firstReads` lists it.
 */
export function formatDiff(diff: FleetDiff, format: DiffFormat = { firstReads: false }): string {
  const clock = new Clock(diff);
  const c = diff.counts;
  // An answer of a server without the count (older): counted from the list, which may be cut.
  const firstReadCount = c.firmwareFirstReads ?? diff.firmwareChanged.filter((f) => f.from === null).length;
  const changedCount = c.firmwareChanged - firstReadCount;
  const out = [
    `fleet diff: ${windowLine(diff.window)}, ${diff.events} events, times UTC`,
    `  ${c.wentDark} went dark (${c.stillDark} still dark at the end), ${c.recovered} recovered; ${c.alarmsOpened} alarms opened, ${c.alarmsClosed} closed, ${c.alarmsAcknowledged} acknowledged; ` +
      `${c.driftOpened} drift opened, ${c.driftClosed} closed; ${changedCount} firmware changes; ` +
      `rollout steps ${c.stepsStarted} started, ${c.stepsSucceeded} succeeded, ${c.stepsFailed} failed, ${c.stepsHeld} held; ${c.intents} intents; ` +
      `${c.joined} joined, ${c.left} left, ${c.moved} moved; ${firstReadCount} first reads of firmware`,
  ];
  const section = (title: string, count: number, lines: string[]): void => {
    if (count === 0) return;
    out.push('', `${title} (${count}):`, ...lines.map((text) => `  ${text}`));
    if (lines.length < count) out.push(`  … ${count - lines.length} more (--json, or a narrower window)`);
  };
  const place = (site: string | null, rack: string | null): string => (site ? `${site}/${rack ?? '-'}` : '-');
  const spell = (d: FleetDiff['wentDark'][number]): string => {
    const from = d.lastContactAt ?? d.darkAt;
    const end = d.stillDark ? 'still dark at the end' : d.endedBy === 'recovered' ? clock.at(d.endedAt) : `${clock.at(d.endedAt)} (${d.endedBy})`;
    return `${d.nodeId}  dark ${clock.at(from)} → ${end} (${spoken(d.durationMs)})`;
  };
  section('went dark', c.wentDark, diff.wentDark.map(spell));
  section('recovered (dark before the window)', c.recovered, diff.recovered.map(spell));
  section('dark cleared by maintenance or decommission', c.darkCleared, diff.darkCleared.map(spell));
  if (!diff.alarmSource.available) out.push('', 'alarms: the alarms read model is not built here');
  else if (!diff.alarmSource.complete) out.push('', `alarms: the read model had applied the log only through position ${diff.alarmSource.throughPosition ?? 0}`);
  section('alarms opened', c.alarmsOpened, diff.alarmsOpened.map((a) => `${clock.at(a.openedAt)}  ${a.kind} ${a.severity} ${a.alarmId}: ${a.summary}`));
  section('alarms closed', c.alarmsClosed, diff.alarmsClosed.map((a) => `${clock.at(a.closedAt)}  ${a.kind} ${a.alarmId}: ${a.summary}`));
  section('alarms acknowledged', c.alarmsAcknowledged, diff.alarmsAcknowledged.map((a) => `${clock.at(a.at)}  ${who(a.by, a.role)}: ${a.alarmId}${a.note ? ` '${a.note}'` : ''}`));
  const drift = (d: FleetDiff['driftOpened'][number]): string => `${d.nodeId}  ${d.field} ${d.kind}: declared ${d.declared ?? '-'}, observed ${d.observed ?? '-'}`;
  section('drift opened', c.driftOpened, diff.driftOpened.map(drift));
  section('drift closed', c.driftClosed, diff.driftClosed.map(drift));
  const firmwareLine = (f: FleetDiff['firmwareChanged'][number]): string => `${f.nodeId}  ${f.component} ${f.from ?? '(absent)'} → ${f.to ?? '(absent)'}  (seen ${clock.at(f.observedAt)})`;
  const firstReads = diff.firmwareChanged.filter((f) => f.from === null);
  section('firmware changed', changedCount, diff.firmwareChanged.filter((f) => f.from !== null).map(firmwareLine));
  section(
    'rollout steps',
    diff.rolloutSteps.length,
    diff.rolloutSteps.map((s) => `${clock.at(s.at)}  ${s.rolloutId ?? '-'}  ${s.nodeId ?? '-'}  ${s.change}${s.component ? `  ${s.component} → ${s.targetVersion ?? '?'}` : ''}${s.by ? `  by ${s.by}` : ''}`),
  );
  section('rollouts', c.rolloutMilestones, diff.rolloutMilestones.map((m) => `${clock.at(m.at)}  ${m.by ? `by ${m.by}: ` : ''}${m.summary}`));
  section('provisioning', c.provisioning, diff.provisioning.map((m) => `${clock.at(m.at)}  ${m.by ? `by ${m.by}: ` : ''}${m.summary}`));
  section('intents', c.intents, diff.intents.map((i) => `${clock.at(i.at)}  ${who(i.by, i.role)}: ${i.summary}`));
  section('joined', c.joined, diff.joined.map((m) => `${clock.at(m.at)}  ${m.nodeId} in ${place(m.site, m.rack)} ${who(m.by, m.role)}`));
  section('left', c.left, diff.left.map((m) => `${clock.at(m.at)}  ${m.nodeId} from ${place(m.site, m.rack)} ${who(m.by, m.role)}${m.reason ? ` '${m.reason}'` : ''}`));
  section('moved', c.moved, diff.moved.map((m) => `${clock.at(m.at)}  ${m.nodeId} ${place(m.previousSite ?? null, m.previousRack ?? null)} → ${place(m.site, m.rack)} ${who(m.by, m.role)}`));
  if (format.firstReads) section('first reads of firmware (no version before the window)', firstReadCount, firstReads.map(firmwareLine));
  else if (firstReadCount > 0) {
    const listed = firstReads.length < firstReadCount ? ` (of the ${firstReads.length} listed)` : '';
    out.push('', `first reads of firmware (no version before the window, not changes): ${firstReadCount}: ${byComponent(firstReads)}${listed}; --first-reads lists them`);
  }
  if (diff.truncated.length > 0) out.push('', `lists cut at --limit: ${diff.truncated.join(', ')}`);
  return `${out.join('\n')}\n`;
}

/** `fleet-ledger replay timeline NODE [--from WHEN] [--to WHEN]`. */
export function runTimeline(argv: string[]): Promise<number> {
  return runApiCommand('replay timeline', timelineUsage, argv, async () => {
    const { values, positionals } = parseCommandArgs(argv, windowOptions);
    if (values.help) {
      process.stdout.write(timelineUsage);
      return exitCodes.ok;
    }
    const nodeId = required(positionals, 0, 'NODE');
    if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
    const connection = connectionOf(values);
    const timeline = await callApi<NodeTimeline>(connection, `/v1/history/nodes/${encodeURIComponent(nodeId)}/timeline`, { query: { from: values.from, to: values.to, limit: limitOf(values.limit) } });
    output(connection, timeline, () => formatTimeline(timeline));
    return exitCodes.ok;
  });
}

/** `fleet-ledger replay diff --from WHEN [--to WHEN]`. */
export function runDiff(argv: string[]): Promise<number> {
  return runApiCommand('replay diff', diffUsage, argv, async () => {
    const { values, positionals } = parseCommandArgs(argv, { ...windowOptions, 'first-reads': { type: 'boolean', default: false } });
    if (values.help) {
      process.stdout.write(diffUsage);
      return exitCodes.ok;
    }
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    if (!values.from) throw new UsageError('missing --from WHEN');
    const connection = connectionOf(values);
    const diff = await callApi<FleetDiff>(connection, '/v1/history/diff', { query: { from: values.from, to: values.to, limit: limitOf(values.limit) } });
    output(connection, diff, () => formatDiff(diff, { firstReads: values['first-reads'] }));
    return exitCodes.ok;
  });
}
