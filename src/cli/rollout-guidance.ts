/**
 * What `fleet-ledger rollout` tells an operator beyond the rollout's state: what an approval did and what comes
 * next, the commands that resolve a held node, and when `status --watch` ends (with which exit code).
 */
/** `status --watch` exit codes beyond the shared ones: the rollout stopped for an operator, or was aborted. */
export const watchExit = { completed: 0, stopped: 4, aborted: 5 } as const;

/**
 * When `status --watch` ends, and with which code: where an operator is needed (halted, paused) or nothing more
 * will happen (completed, aborted). Undefined: keep watching.
 */
export function watchExitCode(status: string): number | undefined {
  if (status === 'completed') return watchExit.completed;
  if (status === 'aborted') return watchExit.aborted;
  if (status === 'halted' || status === 'paused') return watchExit.stopped;
  return undefined;
}

/** What an operator does about a held node, by hold. */
export function nextForHold(rolloutId: string, node: { nodeId: string; hold: string | null }): string {
  const verb = (action: string) => `fleet-ledger rollout node ${rolloutId} ${node.nodeId} ${action} --reason "..."`;
  if (node.hold === 'reconcile-required') {
    return `the outcome of its update is unclear: read the BMC (its task list and the installed version); then ${verb('retry')} (a new attempt), ${verb('skip')} (leave it as it is), or ${verb('quarantine')}`;
  }
  return `past its step deadline: ${verb('retry')}, ${verb('skip')}, or ${verb('release')} (give back its slot once the node is idle)`;
}

/** What happened to an approval, and what comes next. */
export function describeApproval(rollout: any): string {
  const { by, required: needed } = rollout.approvals as { by: string[]; required: number };
  if (by.length < needed) {
    return `approved by ${by.join(', ')} (${by.length} of ${needed}): it needs ${needed - by.length} more approval from a different operator: fleet-ledger rollout approve ${rollout.rolloutId} --reason "..."\n`;
  }
  const starting = rollout.status === 'awaiting-approval';
  return `approved (${by.length} of ${needed}: ${by.join(', ')}): ${starting ? 'dispatch of the canary begins at the saga engine\'s next tick (a running fleet-ledger start drives it)' : `the rollout is ${rollout.status}`}\nfollow it with: fleet-ledger rollout status ${rollout.rolloutId} --watch\n`;
}

