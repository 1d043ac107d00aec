import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FleetEvent } from '../../events/index.js';
import { alarmAckDecider, nodeDecider, type NodeIntent } from '../../sagas/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const nodeId = 'dc1-r01-n01';
const registered: FleetEvent = {
  type: 'NodeRegistered',
  data: { nodeId, site: 'dc1', rack: 'r01', bmc: { protocol: 'redfish', address: 'https://10.0.0.1', credentialRef: 'bmc' }, expectedIntervalS: 60 },
};
const cordoned: FleetEvent = { type: 'NodeCordoned', data: { nodeId, reason: 'drain' } };
const latched: FleetEvent = { type: 'LockoutLatched', data: { nodeId, cause: 'DRIVER_AUTH', credentialFingerprint: 'f1', at: '2026-03-02T09:00:00.000Z' } };
const window = { from: '2026-03-02T09:00:00Z', until: '2026-03-02T10:00:00Z' };
const node = deciderSpec(nodeDecider);

describe('the node decider: an intent that changes nothing records nothing', () => {
  it('cordoning a cordoned node records nothing and answers with the existing position', () => {
    node.given([registered, cordoned]).when({ intent: 'cordon', nodeId, reason: 'again' }).thenUnchanged(2);
  });

  it('cordoning an uncordoned node records NodeCordoned', () => {
    node.given([registered]).when({ intent: 'cordon', nodeId, reason: 'drain' }).then([cordoned]);
    node.given([registered, cordoned, { type: 'NodeUncordoned', data: { nodeId } }]).when({ intent: 'cordon', nodeId, reason: 'drain' }).then([cordoned]);
  });

  it('uncordoning a node never cordoned records nothing and answers with the position since which it has been so', () => {
    node.given([registered]).when({ intent: 'uncordon', nodeId }).thenUnchanged(1);
  });

  it('clearing a latch that is not there records nothing; clearing one that is records LockoutLatchCleared', () => {
    node.given([registered]).when({ intent: 'clear-latch', nodeId, reason: 'password reset' }).thenUnchanged(1);
    node.given([registered, latched]).when({ intent: 'clear-latch', nodeId, reason: 'password reset' }).then([{ type: 'LockoutLatchCleared', data: { nodeId, reason: 'password reset' } }]);
    node.given([registered, latched, { type: 'LockoutLatchCleared', data: { nodeId, reason: 'x' } }]).when({ intent: 'clear-latch', nodeId, reason: 'again' }).thenUnchanged(3);
  });

  it("accepting the certificate already pinned records nothing; accepting the one presented in its place records BmcCertificateAccepted", () => {
    const summary = (fingerprint: string) => ({ fingerprint, subject: 'CN=10.0.0.1', issuer: 'CN=10.0.0.1', validFrom: '2026-01-01T00:00:00.000Z', validTo: '2036-01-01T00:00:00.000Z', serial: '1A', selfSigned: true });
    const first = 'a'.repeat(64);
    const replaced = 'b'.repeat(64);
    const observed: FleetEvent = { type: 'BmcCertificateObserved', data: { nodeId, address: 'https://10.0.0.1', certificate: summary(first), trust: 'first-use', at: '2026-03-02T09:00:00.000Z' } };
    const changed: FleetEvent = { type: 'BmcCertificateChanged', data: { nodeId, address: 'https://10.0.0.1', pinnedFingerprint: first, presented: summary(replaced), at: '2026-03-02T10:00:00.000Z' } };
    const accept = { intent: 'accept-certificate', nodeId, fingerprint: replaced, reason: 'reflashed' } as const;
    node.given([registered, observed]).when({ ...accept, fingerprint: first }).thenUnchanged(2);
    node.given([registered, observed, changed]).when(accept).then([{ type: 'BmcCertificateAccepted', data: { nodeId, fingerprint: replaced, reason: 'reflashed' } }]);
    node.given([registered, observed, changed, { type: 'BmcCertificateAccepted', data: { nodeId, fingerprint: replaced, reason: 'reflashed' } }]).when({ ...accept, reason: 'again' }).thenUnchanged(4);
  });

  it('quarantining a quarantined node and decommissioning a decommissioned one record nothing', () => {
    node.given([registered, { type: 'NodeQuarantined', data: { nodeId, reason: 'XID 79' } }]).when({ intent: 'quarantine', nodeId, reason: 'again' }).thenUnchanged(2);
    node.given([registered, { type: 'NodeDecommissioned', data: { nodeId, reason: 'eol' } }]).when({ intent: 'decommission', nodeId, reason: 'again' }).thenUnchanged(2);
  });

  it('setting the maintenance window the node already has records nothing, however its instants are written', () => {
    const set: FleetEvent = { type: 'MaintenanceWindowSet', data: { nodeId, ...window, reason: 'swap PSU' } };
    node.given([registered, set]).when({ intent: 'set-maintenance', nodeId, from: '2026-03-02T09:00:00.000Z', until: '2026-03-02T11:00:00+01:00', reason: 'other' }).thenUnchanged(2);
    node.given([registered, set]).when({ intent: 'set-maintenance', nodeId, from: window.from, until: '2026-03-02T11:00:00Z', reason: 'longer' }).then([
      { type: 'MaintenanceWindowSet', data: { nodeId, from: window.from, until: '2026-03-02T11:00:00Z', reason: 'longer' } },
    ]);
  });

  it('an intent about a node nobody registered or declared is refused', () => {
    node.given([]).when({ intent: 'cordon', nodeId, reason: 'x' }).thenRefused({ code: 'NODE_UNKNOWN', nodeId });
  });

  it('observations on the node stream change no intent: a cordon after them still answers with its own position', () => {
    const observed = { type: 'GpuXidObserved', data: { source: 'agent', dialect: 'kernel-log', unrecognized: [], events: [] } } as unknown as FleetEvent;
    node.given([registered, cordoned, observed, observed]).when({ intent: 'cordon', nodeId, reason: 'again' }).thenUnchanged(2);
  });
});

describe('the alarm acknowledgement decider', () => {
  const alarm = deciderSpec(alarmAckDecider);
  const acked: FleetEvent = { type: 'AlarmAcknowledged', data: { alarmId: 'dark:n1', note: 'on it' } };

  it('acknowledging an acknowledged alarm records nothing and answers with the acknowledgement position', () => {
    alarm.given([acked]).when({ alarmId: 'dark:n1', note: 'again', openedAt: 500 }).thenUnchanged(1);
  });

  it('an alarm that opened again after its acknowledgement is acknowledged anew', () => {
    alarm.given([acked]).when({ alarmId: 'dark:n1', openedAt: 5_000 }).then([{ type: 'AlarmAcknowledged', data: { alarmId: 'dark:n1' } }]);
    alarm.given([]).when({ alarmId: 'dark:n1', note: 'seen', openedAt: 0 }).then([{ type: 'AlarmAcknowledged', data: { alarmId: 'dark:n1', note: 'seen' } }]);
  });
});

const intent: fc.Arbitrary<NodeIntent> = fc.oneof(
  fc.constantFrom<NodeIntent>(
    { intent: 'cordon', nodeId, reason: 'r' },
    { intent: 'uncordon', nodeId },
    { intent: 'quarantine', nodeId, reason: 'r' },
    { intent: 'release', nodeId },
    { intent: 'decommission', nodeId, reason: 'r' },
    { intent: 'clear-latch', nodeId, reason: 'r' },
  ),
  fc.constantFrom('09', '10', '11').map((hour): NodeIntent => ({ intent: 'set-maintenance', nodeId, from: `2026-03-02T08:00:00Z`, until: `2026-03-02T${hour}:00:00Z`, reason: 'r' })),
);
/** What the poller adds between intents: a latch (an intent clears it) or an observation (changes no intent). */
const pollerEvent = fc.constantFrom<FleetEvent>(latched, { type: 'NodeRecovered', data: { nodeId, darkSince: null, recoveredAt: '2026-03-02T09:00:00.000Z', consecutiveSuccesses: 3 } });

describe('for all intent sequences', () => {
  it('applying the same intent twice records at most one event, and the second answer names where the first left it', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(intent, pollerEvent), { maxLength: 30 }), intent, (history, repeated) => {
        // Run the history through the decider as the shell would: an intent's recorded events join the stream.
        const stream: FleetEvent[] = [registered];
        const fold = () => stream.reduce((state, event, index) => nodeDecider.evolve(state, event, { position: index + 1, streamVersion: index + 1, recordedAt: index, actor: { kind: 'system', id: 't' } }), nodeDecider.initialState());
        for (const item of history) {
          if ('intent' in item) {
            const decision = nodeDecider.decide(item, fold());
            if (decision.kind === 'record') stream.push(...decision.events);
          } else stream.push(item);
        }
        const first = nodeDecider.decide(repeated, fold());
        if (first.kind === 'record') stream.push(...first.events);
        const second = nodeDecider.decide(repeated, fold());
        expect(second.kind).toBe('unchanged');
        if (first.kind === 'record' && second.kind === 'unchanged') expect(second.position).toBe(stream.length);
        if (first.kind === 'unchanged' && second.kind === 'unchanged') expect(second.position).toBe(first.position);
      }),
      { numRuns: 300 },
    );
  });
});
