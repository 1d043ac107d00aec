import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FleetEvent } from '../../events/index.js';
import { planRollout, provisionCommandDecider, rolloutCommandDecider, type Candidate, type RolloutOperatorCommand } from '../../sagas/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
const firmware = { component: 'BMC', version: '9.9.9', imageUri: 'http://img/9.9.9.bin', method: 'SimpleUpdate' as const, applyTime: 'Immediate' as const };
const fleet: Candidate[] = [0, 1, 2, 3].map((i) => ({ nodeId: `n${i}`, site: 's1', rack: `r${i}`, pdu: 'p0', tor: `t${i}`, cdu: 'c0', vendor: 'dell', model: 'R750', fromVersion: '1.0' }));
const plan = planRollout({ firmware, selector: {}, seed: 1 }, fleet, sha);
const rolloutId = 'fw-1';
const planned = { type: 'RolloutPlanned', data: { rolloutId, plan } } as FleetEvent;
const rollout = deciderSpec(rolloutCommandDecider(rolloutId));

describe('the rollout command decider', () => {
  it('requesting a rollout that exists is refused', () => {
    rollout.given([]).when({ verb: 'request', plan }).then([planned]);
    rollout.given([planned]).when({ verb: 'request', plan }).thenRefused({ code: 'SAGA_EXISTS' });
  });

  it('a verb on a rollout nobody requested is refused as not found', () => {
    rollout.given([]).when({ verb: 'approve', reason: 'ok' }).thenRefused({ code: 'SAGA_NOT_FOUND' });
  });

  it('a verb carrying a revision other than the rollout’s is refused as stale, whatever the verb', () => {
    rollout.given([planned]).when({ verb: 'approve', reason: 'ok', expectedRevision: 7 }).thenRefused({ code: 'SAGA_STALE_REVISION', details: { expected: 7, actual: 1 } });
    rollout.given([planned]).when({ verb: 'approve', reason: 'ok', expectedRevision: 1 }).then([{ type: 'RolloutApproved', data: { rolloutId, reason: 'ok' } }]);
  });

  it('pausing a rollout that is not running is refused, and nothing is recorded', () => {
    rollout.given([planned]).when({ verb: 'pause', reason: 'look' }).thenRefused({ code: 'SAGA_INVALID_STATE', details: { status: 'awaiting-approval' } });
  });

  it('aborting an aborted rollout is refused', () => {
    rollout.given([planned, { type: 'RolloutAborted', data: { rolloutId, reason: 'x' } }]).when({ verb: 'abort', reason: 'again' }).thenRefused({ code: 'SAGA_INVALID_STATE' });
  });

  it('a cap is only tightened live, never loosened', () => {
    rollout.given([planned]).when({ verb: 'tighten-cap', cap: plan.capPerSite + 1, reason: 'more' }).thenRefused({ code: 'SAGA_INVALID_STATE' });
  });

  it('a node verb names a target of the rollout', () => {
    rollout.given([planned]).when({ verb: 'node', nodeId: 'n9', action: 'skip', reason: 'x' }).thenRefused({ code: 'SAGA_NOT_FOUND', details: { nodeId: 'n9' } });
    rollout.given([planned]).when({ verb: 'node', nodeId: 'n1', action: 'skip', reason: 'x' }).then([{ type: 'NodeVerbApplied', data: { rolloutId, nodeId: 'n1', verb: 'skip', reason: 'x' } }]);
  });

  it('for all verb sequences, a verb decided on the stream it was read from either records one event or refuses, and a stale revision always refuses', () => {
    const verb = fc.constantFrom<Exclude<RolloutOperatorCommand, { verb: 'request' }>>(
      { verb: 'approve', reason: 'r' },
      { verb: 'pause', reason: 'r' },
      { verb: 'resume', reason: 'r' },
      { verb: 'abort', reason: 'r' },
      { verb: 'advance', reason: 'r' },
      { verb: 'tighten-cap', cap: 1, reason: 'r' },
      { verb: 'node', nodeId: 'n0', action: 'retry', reason: 'r' },
    );
    fc.assert(
      fc.property(fc.array(verb, { maxLength: 12 }), verb, fc.integer({ min: 0, max: 40 }), (history, last, revision) => {
        const stream: FleetEvent[] = [planned];
        for (const command of history) {
          const decision = rollout.given(stream).when(command).decision;
          if (decision.kind === 'record') stream.push(...decision.events);
          expect(decision.kind).not.toBe('unchanged');
        }
        const decision = rollout.given(stream).when({ ...last, expectedRevision: revision }).decision;
        if (revision !== stream.length) expect(decision).toMatchObject({ kind: 'refused', refusal: { code: 'SAGA_STALE_REVISION' } });
        else if (decision.kind === 'record') expect(decision.events).toHaveLength(1);
      }),
      { numRuns: 200 },
    );
  });
});

describe('the provisioning command decider', () => {
  const nodeId = 'n1';
  const provision = deciderSpec(provisionCommandDecider(nodeId));
  const spec = { nodeId, site: 's', rack: 'r', declared: {}, baseline: [], burnInMs: 1_000, burnInIntervalMs: 100 };
  const started = { type: 'ProvisioningStarted', data: spec } as FleetEvent;

  it('starting a provisioning that exists is refused', () => {
    provision.given([]).when({ verb: 'start', spec }).then([started]);
    provision.given([started]).when({ verb: 'start', spec }).thenRefused({ code: 'SAGA_EXISTS' });
  });

  it('only a quarantined node is released, at the stage named', () => {
    provision.given([started]).when({ verb: 'release', resumeAt: 'validating', reason: 'fixed' }).thenRefused({ code: 'SAGA_INVALID_STATE' });
    const quarantined = { type: 'ProvisioningQuarantined', data: { nodeId, stage: 'validating', reason: 'bom' } } as FleetEvent;
    provision.given([started, quarantined]).when({ verb: 'release', resumeAt: 'validating', reason: 'fixed' }).then([{ type: 'QuarantineReleased', data: { nodeId, resumeAt: 'validating', reason: 'fixed' } }]);
  });

  it('abandoning an abandoned provisioning is refused, and one never started is not found', () => {
    provision.given([started, { type: 'ProvisioningAbandoned', data: { nodeId, reason: 'rma' } } as FleetEvent]).when({ verb: 'abandon', reason: 'again' }).thenRefused({ code: 'SAGA_INVALID_STATE' });
    provision.given([]).when({ verb: 'abandon', reason: 'x' }).thenRefused({ code: 'SAGA_NOT_FOUND' });
  });
});
