import { describe, expect, it } from 'vitest';
import { describeApproval, nextForHold, watchExitCode } from '../../src/cli/rollout-guidance.js';

describe('what rollout commands tell the operator', () => {
  it('status --watch ends on a completed (0), halted or paused (4) or aborted (5) rollout, and keeps watching otherwise', () => {
    expect(watchExitCode('completed')).toBe(0);
    expect(watchExitCode('halted')).toBe(4);
    expect(watchExitCode('paused')).toBe(4);
    expect(watchExitCode('aborted')).toBe(5);
    expect(watchExitCode('running')).toBeUndefined();
    expect(watchExitCode('awaiting-approval')).toBeUndefined();
  });

  it('a reconcile-required hold names the commands that resolve it', () => {
    const next = nextForHold('va-1', { nodeId: 'bmc-00042', hold: 'reconcile-required' });
    for (const action of ['retry', 'skip', 'quarantine']) expect(next).toContain(`fleet-ledger rollout node va-1 bmc-00042 ${action} --reason`);
    expect(nextForHold('va-1', { nodeId: 'bmc-00042', hold: 'deadline-exceeded' })).toContain('fleet-ledger rollout node va-1 bmc-00042 release --reason');
  });

  it('approve says what happened and what comes next, not "awaiting-approval ... 1/1"', () => {
    const approved = describeApproval({ rolloutId: 'va-1', status: 'awaiting-approval', approvals: { by: ['operator:ana'], required: 1 } });
    expect(approved).toMatch(/^approved \(1 of 1: operator:ana\): dispatch of the canary begins/);
    expect(approved).toContain('fleet-ledger rollout status va-1 --watch');
    const half = describeApproval({ rolloutId: 'va-1', status: 'awaiting-approval', approvals: { by: ['operator:ana'], required: 2 } });
    expect(half).toMatch(/1 of 2.*needs 1 more approval from a different operator: fleet-ledger rollout approve va-1/);
  });
});
