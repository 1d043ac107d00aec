/**
 * How an alarm row starts: open, unacknowledged, without a parent, with the times written as the alarms table keeps
 * them. Shared by every kind of alarm the projection opens.
 */
import type { Row } from '../support/table.js';

export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
export const kindLabel: Record<string, string> = { pdu: 'PDU', tor: 'ToR switch', cdu: 'CDU' };

/** A new open alarm row, unacknowledged and without a parent. */
export function openAlarmRow(alarm: { alarmId: string; kind: string; severity: string; nodeId: string | null; component: string | null; site: string | null; rack: string | null; summary: string; evidence: Row; at: number; position: number }): Row {
  return {
    alarm_id: alarm.alarmId,
    kind: alarm.kind,
    severity: alarm.severity,
    status: 'open',
    node_id: alarm.nodeId,
    component: alarm.component,
    site: alarm.site,
    rack: alarm.rack,
    parent_id: null,
    summary: alarm.summary,
    evidence: alarm.evidence,
    opened_at: alarm.at,
    opened_position: alarm.position,
    updated_at: alarm.at,
    closed_at: null,
    acknowledged_by: null,
    acknowledged_at: null,
    ack_note: null,
  };
}
