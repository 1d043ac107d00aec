/** `fleet-ledger rollout <verb>`: plan, start, approve, watch, pause, resume and abort firmware rollouts, through the API. */
import { callApi, connectionOf, durationMs, connectionUsage, exitCodes, output, parseCommandArgs, required, runApiCommand, table, UsageError } from '../api-client.js';

export const summary = 'firmware rollouts: plan (preview), start, approve, status (a live progress bar), pause, resume, abort, node verbs';

const usage = `usage: fleet-ledger rollout <verb> [options]

  plan  --component C --version V --image URI [selection and strategy]   preview the plan; nothing is recorded
  start --component C --version V --image URI [selection and strategy] [--id ID]
                                     record the frozen plan (RolloutPlanned); it waits for approval
  approve ID --reason TEXT           approve (a second, distinct operator when the plan asks for two)
  status [ID] [--watch]              every rollout, or one with its waves (--watch: redraw until it ends)
  pause ID --reason TEXT             stop dispatch; nodes in flight run to a safe point
  resume ID --reason TEXT            resume a paused or halted rollout (acknowledges why it stopped)
  abort ID --reason TEXT             final; recovery is a new rollout
  advance ID --reason TEXT           open the next wave after a passed gate (plans made with automatic advance off)
  cap ID --cap N --reason TEXT       tighten the cap live
  node ID NODE retry|skip|release|quarantine --reason TEXT

  selection: --sites a,b --racks r1,r2 --models M --vendors V --nodes n1,n2 --from-versions v1,v2
  strategy:  --cap N (per site, default 50) --rack-limit N (in flight per rack, default 2) --waves 0.02,0.05,...
             --bake DURATION (after each wave, default 30m) --seed N --approvals 1|2 --method SimpleUpdate|MultipartHttpPush
             --apply-time Immediate|OnReset
  --revision N   refuse the verb if the rollout moved past revision N
${connectionUsage}
`;

const options = {
  component: { type: 'string' },
  version: { type: 'string' },
  image: { type: 'string' },
  id: { type: 'string' },
  reason: { type: 'string' },
  sites: { type: 'string' },
  racks: { type: 'string' },
  models: { type: 'string' },
  vendors: { type: 'string' },
  nodes: { type: 'string' },
  'from-versions': { type: 'string' },
  cap: { type: 'string' },
  'rack-limit': { type: 'string' },
  waves: { type: 'string' },
  bake: { type: 'string' },
  seed: { type: 'string' },
  approvals: { type: 'string' },
  method: { type: 'string' },
  'apply-time': { type: 'string' },
  revision: { type: 'string' },
  watch: { type: 'boolean', default: false },
} as const;


function positiveInt(text: string, name: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`--${name} must be a positive integer, got ${text}`);
  return value;
}

type Values = Record<string, string | boolean | undefined>;

function requestOf(values: Values): Record<string, unknown> {
  const need = (name: string): string => {
    const value = values[name];
    if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
    return value;
  };
  const listOf = (name: string): string[] | undefined => (typeof values[name] === 'string' ? (values[name] as string).split(',').map((item) => item.trim()).filter(Boolean) : undefined);
  const selector = Object.fromEntries(
    [['sites', 'sites'], ['racks', 'racks'], ['models', 'models'], ['vendors', 'vendors'], ['nodes', 'nodes'], ['fromVersions', 'from-versions']].flatMap(([key, flag]) => {
      const list = listOf(flag!);
      return list ? [[key, list]] : [];
    }),
  );
  return {
    firmware: {
      component: need('component'),
      version: need('version'),
      imageUri: need('image'),
      ...(values.method ? { method: values.method } : {}),
      ...(values['apply-time'] ? { applyTime: values['apply-time'] } : {}),
    },
    selector,
    ...(values.cap ? { capPerSite: positiveInt(values.cap as string, 'cap') } : {}),
    ...(values['rack-limit'] ? { inFlightDomainLimits: { rack: positiveInt(values['rack-limit'] as string, 'rack-limit') } } : {}),
    ...(values.waves ? { waveFractions: (values.waves as string).split(',').map(Number) } : {}),
    ...(values.bake ? { bakeMs: durationMs(values.bake as string) } : {}),
    ...(values.seed ? { seed: Number(values.seed) } : {}),
    ...(values.approvals ? { approvalsRequired: positiveInt(values.approvals as string, 'approvals') } : {}),
    ...(values.id ? { rolloutId: values.id } : {}),
  };
}

function bar(done: number, total: number, width = 30): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`;
}

function describe(rollout: any): string {
  const outcomes = rollout.outcomes as Record<string, number>;
  const done = Object.values(outcomes).reduce((a, b) => a + b, 0);
  const lines = [
    `${rollout.rolloutId}  ${rollout.status}${rollout.stopReason ? ` (${rollout.stopReason})` : ''}  ${rollout.firmware.component} -> ${rollout.firmware.version}  revision ${rollout.revision}`,
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
        const plan = await callApi(connection, '/v1/rollouts/preview', { method: 'POST', body: requestOf(values) });
        output(connection, plan, () => `${plan.targetCount} targets, ${plan.excluded.length} excluded, cap ${plan.capPerSite} per site, seed ${plan.seed}\n${table(plan.waves, ['index', 'canary', 'size'])}`);
        return exitCodes.ok;
      }
      case 'start': {
        const rollout = await callApi(connection, '/v1/rollouts', { method: 'POST', body: requestOf(values) });
        output(connection, rollout, () => `${describe(rollout)}approve it with: fleet-ledger rollout approve ${rollout.rolloutId} --reason "..."\n`);
        return exitCodes.ok;
      }
      case 'approve':
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
          const held = (rollout.nodes as Array<{ nodeId: string; state: string; hold: string | null }>).filter((node) => node.hold);
          output(connection, rollout, () => `${describe(rollout)}${held.length ? `  held: ${held.map((node) => `${node.nodeId} (${node.hold})`).join(', ')}\n` : ''}`);
          if (!values.watch || ['completed', 'aborted'].includes(rollout.status)) return exitCodes.ok;
          await new Promise((resolve) => setTimeout(resolve, 2_000));
        }
      }
      default:
        throw new UsageError(verb ? `unknown verb '${verb}'` : 'missing verb');
    }
  });
}
