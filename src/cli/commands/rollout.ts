/** `fleet-ledger rollout <verb>`: plan, start, approve, watch, pause, resume and abort firmware rollouts, through the API. */
import { callApi, connectionOf, connectionUsage, exitCodes, output, parseCommandArgs, required, runApiCommand, table, UsageError } from '../api-client.js';
import { describePolicy, rolloutRequestOf, rolloutRequestOptions, rolloutRequestUsage } from '../rollout-request.js';
import { describeApproval, nextForHold, watchExitCode } from '../rollout-guidance.js';

export const summary = 'firmware rollouts: plan (preview), start, approve, status (a live progress bar), pause, resume, abort, node verbs';

const usage = `usage: fleet-ledger rollout <verb> [options]

  plan  --component C --version V --image URI [policy]   preview the plan and the policy it applies; nothing is recorded
  start --component C --version V --image URI [policy] [--id ID]
                                     record the frozen plan (RolloutPlanned); it waits for approval
  approve ID --reason TEXT           approve (a second, distinct operator when the plan asks for two)
  status [ID] [--watch]              every rollout, or one with its waves (--watch: redraw until it completes, is
                                     aborted, halts or pauses; exit 0 completed, 4 halted or paused, 5 aborted)
  pause ID --reason TEXT             stop dispatch; nodes in flight run to a safe point
  resume ID --reason TEXT            resume a paused or halted rollout (acknowledges why it stopped)
  abort ID --reason TEXT             final; recovery is a new rollout
  advance ID --reason TEXT           open the next wave after a passed gate (plans made with --manual-advance)
  cap ID --cap N --reason TEXT       tighten the cap live
  node ID NODE retry|skip|release|quarantine --reason TEXT

policy:
${rolloutRequestUsage}
  --revision N   refuse the verb if the rollout moved past revision N
${connectionUsage}
`;

const options = {
  ...rolloutRequestOptions,
  id: { type: 'string' },
  reason: { type: 'string' },
  revision: { type: 'string' },
  watch: { type: 'boolean', default: false },
} as const;

function positiveInt(text: string, name: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`--${name} must be a positive integer, got ${text}`);
  return value;
}

function printWarnings(warnings: Array<{ code: string; message: string }> | undefined): void {
  for (const warning of warnings ?? []) process.stderr.write(`warning ${warning.code}: ${warning.message}\n`);
}

function bar(done: number, total: number, width = 30): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`;
}

function describe(rollout: any): string {
  const outcomes = rollout.outcomes as Record<string, number>;
  const done = Object.values(outcomes).reduce((a, b) => a + b, 0);
  // Approved but not yet picked up by the engine: say so rather than "awaiting-approval" with every approval given.
  const status = rollout.status === 'awaiting-approval' && rollout.approvals.by.length >= rollout.approvals.required ? 'approved, starting' : rollout.status;
  const lines = [
    `${rollout.rolloutId}  ${status}${rollout.stopReason ? ` (${rollout.stopReason})` : ''}  ${rollout.firmware.component} -> ${rollout.firmware.version}  revision ${rollout.revision}`,
    `  ${bar(done, rollout.targets)}  in flight ${rollout.inFlight} (cap ${rollout.cap})  updated ${outcomes.updated}  already ${outcomes['already-at-target']}  failed ${outcomes.failed}  quarantined ${outcomes.quarantined}  skipped ${outcomes.skipped}`,
    `  approvals ${rollout.approvals.by.length}/${rollout.approvals.required}${rollout.approvals.by.length ? ` (${rollout.approvals.by.join(', ')})` : ''}; ${rollout.excluded} excluded`,
    ...rollout.waves.map((wave: any) => `  wave ${wave.index}${wave.canary ? ' (canary)' : ''}: ${wave.outcomes}/${wave.size}, ${wave.failures} failed, gate ${wave.gate ?? '-'}${wave.index === rollout.currentWave ? '  <' : ''}`),
  ];
  return `${lines.join('\n')}\n`;
}

export function run(argv: string[]): Promise<number> {
  return runApiCommand('rollout', usage, argv, async () => {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (values.help) {
      process.stdout.write(usage);
      return exitCodes.ok;
    }
    const connection = connectionOf(values);
    const verbBody = (): Record<string, unknown> => {
      if (!values.reason) throw new UsageError('--reason is required');
      return { reason: values.reason, ...(values.revision ? { expectedRevision: Number(values.revision) } : {}) };
    };
    const verb = positionals[0];
    switch (verb) {
      case 'plan': {
        const plan = await callApi(connection, '/v1/rollouts/preview', { method: 'POST', body: rolloutRequestOf(values) });
        if (!values.json) printWarnings(plan.warnings);
        output(connection, plan, () => `${plan.targetCount} targets, ${plan.excluded.length} excluded, cap ${plan.capPerSite} per site, seed ${plan.seed}\n${table(plan.waves, ['index', 'canary', 'size'])}${describePolicy(plan)}\n`);
        return exitCodes.ok;
      }
      case 'start': {
        const rollout = await callApi(connection, '/v1/rollouts', { method: 'POST', body: { ...rolloutRequestOf(values), ...(values.id ? { rolloutId: values.id } : {}) } });
        if (!values.json) printWarnings(rollout.warnings);
        output(connection, rollout, () => `${describe(rollout)}approve it with: fleet-ledger rollout approve ${rollout.rolloutId} --reason "..."\n`);
        return exitCodes.ok;
      }
      case 'approve': {
        const id = required(positionals, 1, 'ID');
        const rollout = await callApi(connection, `/v1/rollouts/${encodeURIComponent(id)}/approve`, { method: 'POST', body: verbBody() });
        output(connection, rollout, () => `${describeApproval(rollout)}${describe(rollout)}`);
        return exitCodes.ok;
      }
      case 'pause':
      case 'resume':
      case 'abort':
      case 'advance': {
        const id = required(positionals, 1, 'ID');
        const rollout = await callApi(connection, `/v1/rollouts/${encodeURIComponent(id)}/${verb}`, { method: 'POST', body: verbBody() });
        output(connection, rollout, () => describe(rollout));
        return exitCodes.ok;
      }
      case 'cap': {
        const id = required(positionals, 1, 'ID');
        if (!values.cap) throw new UsageError('--cap is required');
        const rollout = await callApi(connection, `/v1/rollouts/${encodeURIComponent(id)}/cap`, { method: 'POST', body: { ...verbBody(), cap: positiveInt(values.cap, 'cap') } });
        output(connection, rollout, () => describe(rollout));
        return exitCodes.ok;
      }
      case 'node': {
        const id = required(positionals, 1, 'ID');
        const node = required(positionals, 2, 'NODE');
        const action = required(positionals, 3, 'retry|skip|release|quarantine');
        const rollout = await callApi(connection, `/v1/rollouts/${encodeURIComponent(id)}/nodes/${encodeURIComponent(node)}/${encodeURIComponent(action)}`, { method: 'POST', body: verbBody() });
        output(connection, rollout, () => describe(rollout));
        return exitCodes.ok;
      }
      case 'status': {
        const id = positionals[1];
        if (!id) {
          const { items } = await callApi(connection, '/v1/rollouts');
          output(connection, items, () => (items.length ? items.map(describe).join('\n') : 'no rollouts\n'));
          return exitCodes.ok;
        }
        const live = values.watch && process.stdout.isTTY && !values.json;
        for (;;) {
          const rollout = await callApi(connection, `/v1/rollouts/${encodeURIComponent(id)}`);
          if (live) process.stdout.write('\u001b[2J\u001b[H');
          const held = (rollout.nodes as Array<{ nodeId: string; state: string; hold: string | null; cause?: string }>).filter((node) => node.hold);
          const holds = held.map((node) => `  held: ${node.nodeId} (${node.hold})${node.cause ? `: ${node.cause}` : ''}\n    next: ${nextForHold(rollout.rolloutId, node)}\n`).join('');
          const stopped = rollout.status === 'halted' || rollout.status === 'paused' ? `  ${rollout.status}: resume it with fleet-ledger rollout resume ${rollout.rolloutId} --reason "...", or end it with fleet-ledger rollout abort ${rollout.rolloutId} --reason "..."\n` : '';
          output(connection, rollout, () => `${describe(rollout)}${holds}${stopped}`);
          if (!values.watch) return exitCodes.ok;
          const exit = watchExitCode(rollout.status);
          if (exit !== undefined) return exit;
          await new Promise((resolve) => setTimeout(resolve, 2_000));
        }
      }
      default:
        throw new UsageError(verb ? `unknown verb '${verb}'` : 'missing verb');
    }
  });
}
