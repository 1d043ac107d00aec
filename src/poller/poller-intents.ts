import { assertNever, eventGuard, type CertificateSummary, type EventShape, type RecordedEvent } from '../../events/index.js';
import { pollAddress, pollProtocols, type PollTarget } from './poll-target.js';

/** The intents that change what the poller polls (followed from the log). */
export const pollerIntentTypes = [
  'NodeRegistered',
  'NodeDecommissioned',
  'MaintenanceWindowSet',
  'LockoutLatched',
  'LockoutLatchCleared',
  'BmcCertificateObserved',
  'BmcCertificateChanged',
  'BmcCertificateAccepted',
  // The credential version in force on a node, and its rotation's fence.
  'CredentialStepStarted',
  'BmcPasswordChanged',
  'CredentialStepHeld',
] as const;
const isPollerIntent = eventGuard(pollerIntentTypes);

/** What following the intents does to the poller. */
export interface PollerIntentSink {
  addTarget(target: PollTarget, options: { spreadFirstVisit: boolean }): void;
  removeTarget(nodeId: string): void;
  setMaintenance(nodeId: string, until: number): void;
  /** A lockout latch read from the log. */
  latched(nodeId: string, credentialFingerprint: string): void;
  clearLatch(nodeId: string): void;
  /** A BMC's certificate recorded (pinned if it was trusted at first use and none is pinned). */
  certificateObserved(nodeId: string, fingerprint: string, trust: string): void;
  /** A BMC presented a certificate other than its pin: latched until accepted. */
  certificateChanged(nodeId: string, presented: CertificateSummary): void;
  /** An operator accepted a certificate: pinned, latch lifted. */
  certificateAccepted(nodeId: string, fingerprint: string): void;
  /** A rotation fenced a node, or put a credential version in force on it (`src/credentials/in-force.ts`). */
  credentialEvent(event: EventShape): void;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/** Applies one intent of the log to the poller (any other event is ignored). */
export function applyPollerIntent(event: RecordedEvent, sink: PollerIntentSink): void {
  if (!isPollerIntent(event)) return;
  switch (event.type) {
    case 'NodeRegistered': {
      const { data } = event;
      const { bmc } = data;
      if (!pollProtocols.includes(bmc.protocol)) {
        // The intent schema admits no other protocol; a newer one than this poller knows is said, not dropped silently.
        sink.log?.('node not polled: its BMC protocol is not one this poller speaks', { nodeId: data.nodeId, protocol: bmc.protocol });
        return;
      }
      sink.addTarget(
        {
          nodeId: data.nodeId,
          site: data.site,
          rack: data.rack,
          protocol: bmc.protocol,
          baseUrl: pollAddress(bmc.protocol, bmc.address),
          credentialRef: bmc.credentialRef,
          sessionLimit: bmc.sessionLimit,
          expectedIntervalS: Number(data.expectedIntervalS ?? 60),
        },
        { spreadFirstVisit: true },
      );
      return;
    }
    case 'NodeDecommissioned':
      sink.removeTarget(event.data.nodeId);
      return;
    case 'MaintenanceWindowSet':
      sink.setMaintenance(event.data.nodeId, Date.parse(event.data.until));
      return;
    case 'LockoutLatched':
      sink.latched(event.data.nodeId, event.data.credentialFingerprint);
      return;
    case 'LockoutLatchCleared':
      sink.clearLatch(event.data.nodeId);
      return;
    case 'BmcCertificateObserved':
      sink.certificateObserved(event.data.nodeId, event.data.certificate.fingerprint, event.data.trust);
      return;
    case 'BmcCertificateChanged':
      sink.certificateChanged(event.data.nodeId, event.data.presented);
      return;
    case 'BmcCertificateAccepted':
      sink.certificateAccepted(event.data.nodeId, event.data.fingerprint);
      return;
    case 'CredentialStepStarted':
    case 'BmcPasswordChanged':
    case 'CredentialStepHeld':
      sink.credentialEvent(event);
      return;
    default:
      assertNever(event);
  }
}
