/**
 * Alarms that an event of the log states outright, rather than a state the projection derives: a saga step held for an
 * operator, an event a projection set aside, a break in the ledger's integrity, a site's replication backlog. Each
 * opens one alarm row.
 */
import type { DataOf, RecordedEvent } from '../../events/index.js';
import type { Row } from '../support/table.js';
import { openAlarmRow } from './alarm-row.js';

/** A saga step that cannot go on by itself: open until an operator acts on the step (`saga-hold:<stream>`). */
export function sagaHoldAlarm(event: RecordedEvent & { data: DataOf<'StepHeld'> }, node: { site: string | null; rack: string | null } | undefined, at: number): Row {
  const d = event.data;
  return openAlarmRow({
    alarmId: `saga-hold:${event.stream}`,
    kind: 'saga-hold',
    severity: 'warning',
    nodeId: d.nodeId ?? null,
    component: event.stream,
    site: node?.site ?? null,
    rack: node?.rack ?? null,
    summary: `${d.nodeId ?? event.stream}: ${d.hold} (${d.reason.slice(0, 300)})`,
    evidence: { hold: d.hold, reason: d.reason, stream: event.stream, position: event.position },
    at,
    position: event.position,
  });
}

/** An event a projection could not apply: the read model it feeds is missing one fact. */
export function setAsideAlarm(d: DataOf<'ProjectionEventSetAside'>, nodeId: string | null, at: number, position: number): Row {
  return openAlarmRow({
    alarmId: `set-aside:${d.projection}:${d.position}`,
    kind: 'projection-set-aside',
    severity: 'warning',
    nodeId,
    component: `projection:${d.projection}`,
    site: null,
    rack: null,
    summary: `projection ${d.projection} set event ${d.position} (${d.type}, ${d.stream}) aside: ${d.reason.slice(0, 300)}`,
    evidence: { ...d },
    at,
    position,
  });
}

/** The ledger found its own history altered: critical, and checkpoint signing has stopped. */
export function integrityAlarm(d: DataOf<'LedgerIntegrityAlarmRaised'>, at: number, position: number): Row {
  return openAlarmRow({
    alarmId: `ledger-integrity:${d.code}:${position}`,
    kind: 'ledger-integrity',
    severity: 'critical',
    nodeId: null,
    component: 'ledger',
    site: null,
    rack: null,
    summary: `ledger integrity (${d.code}): ${d.summary.slice(0, 400)}; checkpoint signing stopped`,
    evidence: { ...d },
    at,
    position,
  });
}

/** A site's replication backlog alarm: one per site and slot. */
export const backlogAlarmId = (site: string, slot: string): string => `replication-backlog:${site}:${slot}`;
/** A backlog alarm closes when a heartbeat shows the slot holding less than this share of its bound. */
export const backlogClearShare = 0.25;
/** The share of its bound a slot holds (as the site's heartbeat computes it): 1 when lost, 0 when unbounded. */
export function backlogShare(slot: { walStatus: string | null; retainedBytes: number; limitBytes: number | null }): number {
  if (slot.walStatus === 'lost') return 1;
  return slot.limitBytes ? slot.retainedBytes / slot.limitBytes : 0;
}

/** A site's replication slot holds half its bound or more (or was lost): the centre may soon have to re-synchronise. */
export function backlogAlarm(d: DataOf<'SiteReplicationBacklogWarned'>, at: number, position: number): Row {
  return openAlarmRow({
    alarmId: backlogAlarmId(d.site, d.slot.slot),
    kind: 'replication-backlog',
    severity: d.slot.walStatus === 'lost' ? 'critical' : 'warning',
    nodeId: null,
    component: d.slot.slot,
    site: d.site,
    rack: null,
    summary: d.summary.slice(0, 500),
    evidence: { ...d },
    at,
    position,
  });
}
