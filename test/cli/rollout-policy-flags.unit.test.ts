import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { describePolicy, rolloutRequestOf } from '../../src/cli/rollout-request.js';
import { UsageError } from '../../src/cli/api-client.js';
import { planRollout, planWarnings, type Candidate, type RolloutRequest } from '../../sagas/index.js';

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
const firmware = { component: 'BMC', version: '9.9.9', image: 'http://img/9.9.9.bin' };
const fleet: Candidate[] = Array.from({ length: 12 }, (_, i) => ({ nodeId: `n${i}`, site: 's1', rack: `r${i % 4}`, pdu: `p${i % 2}`, vendor: 'dell', model: 'R750', fromVersion: '1.0' }));

describe('rollout plan and start flags', () => {
  it('take every policy the API takes, and the plan applies each one', () => {
    const values = {
      ...firmware,
      digest: 'ab'.repeat(32),
      method: 'MultipartHttpPush',
      'apply-time': 'OnReset',
      sites: 's1',
      cap: '7',
      'rack-limit': '3',
      'pdu-limit': '5',
      'tor-limit': '6',
      'cdu-limit': '9',
      'wave-rack-limit': '2',
      'wave-pdu-limit': '4',
      canary: '0.25',
      waves: '0.3,0.6',
      bake: '5m',
      seed: '42',
      approvals: '2',
      'retry-budget': '3',
      'canary-failures': '1',
      'wave-failure-ratio': '0.1',
      'cumulative-failure-ratio': '0.05',
      'verify-reads': '4',
      'gate-max-lag': '30s',
      'gate-max-lag-positions': '1000',
      'manual-advance': true,
      'quiet-period': '45s',
      'step-deadline': '20m',
      settle: '90s',
      'retry-backoff': '20s',
      'request-timeout': '8s',
      'poll-interval': '2s',
      'read-interval': '3s',
      'probe-interval': '4s',
    };
    const plan = planRollout(rolloutRequestOf(values) as unknown as RolloutRequest, fleet, sha);
    expect(plan.firmware).toMatchObject({ component: 'BMC', version: '9.9.9', imageUri: firmware.image, digest: 'ab'.repeat(32), method: 'MultipartHttpPush', applyTime: 'OnReset' });
    expect(plan).toMatchObject({
      seed: 42,
      capPerSite: 7,
      inFlightDomainLimits: { rack: 3, pdu: 5, tor: 6, cdu: 9 },
      waveDomainLimits: { rack: 2, pdu: 4 },
      bakeMs: 300_000,
      approvalsRequired: 2,
      retryBudget: 3,
      budgets: { canaryFailures: 1, waveFailureRatio: 0.1, cumulativeFailureRatio: 0.05 },
      verifyReads: 4,
      gate: { maxLagMs: 30_000, maxLagPositions: 1000, autoAdvance: false },
      quietPeriodMs: 45_000,
      stepDeadlineMs: 1_200_000,
      stepTiming: { settleMs: 90_000, retryBackoffMs: 20_000, requestTimeoutMs: 8_000, pollIntervalMs: 2_000, readIntervalMs: 3_000, probeIntervalMs: 4_000 },
    });
    expect(plan.waves[0]!.size).toBe(3); // canary 0.25 of 12
  });

  it('a plan made with no policy flag prints every default it applied', () => {
    const text = describePolicy(planRollout(rolloutRequestOf(firmware) as unknown as RolloutRequest, fleet, sha));
    for (const phrase of ['cap 50 per site', 'retry budget 1 (2 attempts per node)', 'canary failures 0', 'verify reads 3', 'quiet period 10m', 'step deadline 2h', 'settle 10m', 'retry back-off 1m', 'request timeout 15s']) {
      expect(text).toContain(phrase);
    }
  });

  it('a bad value is refused with the flag named', () => {
    const bad: Array<[string, string | boolean]> = [
      ['retry-budget', '-1'],
      ['canary', '1.5'],
      ['wave-failure-ratio', 'lots'],
      ['quiet-period', 'soon'],
      ['cap', '0'],
      ['method', 'Floppy'],
      ['waves', '0.2,0'],
    ];
    for (const [flag, value] of bad) {
      expect(() => rolloutRequestOf({ ...firmware, [flag]: value }), flag).toThrow(UsageError);
      expect(() => rolloutRequestOf({ ...firmware, [flag]: value }), flag).toThrow(`--${flag}`);
    }
  });

  it('a plan over nodes whose inventory was never read says how many, instead of picking a random canary in silence', () => {
    const unread: Candidate[] = Array.from({ length: 8 }, (_, i) => ({ nodeId: `u${i}`, site: 's1', rack: `r${i}` }));
    const warnings = planWarnings(planRollout(rolloutRequestOf(firmware) as unknown as RolloutRequest, [...unread, ...fleet.slice(0, 2)], sha));
    expect(warnings.map((warning) => [warning.code, warning.nodes])).toEqual([
      ['PLAN_INVENTORY_MISSING', 8],
      ['PLAN_FROM_VERSION_UNKNOWN', 8],
    ]);
    expect(warnings[0]!.message).toMatch(/^8 of 10 targets have no inventory read yet/);
    expect(planWarnings(planRollout(rolloutRequestOf(firmware) as unknown as RolloutRequest, fleet, sha))).toEqual([]);
  });
});
