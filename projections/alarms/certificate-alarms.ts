/**
 * The alarm a changed BMC certificate raises: critical, because the poller has stopped sending the BMC anything (no
 * credential, no check) and someone may be answering in its place. Opened by `BmcCertificateChanged`, closed when an
 * operator accepts a certificate (`BmcCertificateAccepted`). A later change while one is open updates it. Pure.
 */
import type { EventOf } from '../../events/index.js';
import type { AlarmBook } from './alarm-book.js';
import { openAlarmRow } from './alarm-row.js';

export const certificateAlarmEventTypes = ['BmcCertificateChanged', 'BmcCertificateAccepted'] as const;
export type CertificateAlarmEvent = EventOf<(typeof certificateAlarmEventTypes)[number]>;

/** What the alarm needs of the node: where it is, and the certificate alarm it has open (kept in its state). */
export interface CertificateAlarmNode {
  site: string | null;
  rack: string | null;
  certificateAlarmId?: string | null;
}

export function applyCertificateAlarm(event: CertificateAlarmEvent, node: CertificateAlarmNode, position: number, at: number, book: AlarmBook): void {
  switch (event.type) {
    case 'BmcCertificateChanged': {
      const d = event.data;
      const alarmId = node.certificateAlarmId ?? `certificate-changed:${d.nodeId}:${position}`;
      node.certificateAlarmId = alarmId;
      book.open(
        openAlarmRow({
          alarmId,
          kind: 'certificate-changed',
          severity: 'critical',
          nodeId: d.nodeId,
          component: 'bmc-certificate',
          site: node.site,
          rack: node.rack,
          summary: `${d.nodeId}: the BMC at ${d.address} presented a certificate other than the one pinned (${d.presented.fingerprint.slice(0, 16)}…, subject ${d.presented.subject.slice(0, 120)}); nothing is sent to it until an operator accepts it`,
          evidence: { address: d.address, pinnedFingerprint: d.pinnedFingerprint, presented: { ...d.presented }, at: d.at },
          at,
          position,
        }),
      );
      return;
    }
    case 'BmcCertificateAccepted': {
      if (!node.certificateAlarmId) return;
      book.update(node.certificateAlarmId, { status: 'closed', closed_at: at, updated_at: at });
      node.certificateAlarmId = null;
      return;
    }
    default: {
      const unexpected: never = event;
      throw new Error(`unexpected certificate alarm event ${String((unexpected as { type: unknown }).type)}`);
    }
  }
}
