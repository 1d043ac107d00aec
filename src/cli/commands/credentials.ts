/** `fleet-ledger credentials <verb>`: rotate BMC passwords as a resumable saga (plan, start, approve, status, pause, resume, abort), through the API. */
import { callApi, connectionOf, connectionUsage, durationMs, exitCodes, output, parseCommandArgs, required, runApiCommand, table, UsageError } from '../api-client.js';
import { watchExitCode } from '../rollout-guidance.js';

export const summary = 'credential rotation: rotate (plan, start), approve, status (a live progress bar), pause, resume, abort, skip a BMC';

const usage = `usage: fleet-ledger credentials <verb> [options]

  rotate --plan [selection] [policy]     preview the plan: waves, excluded BMCs; nothing is recorded
  rotate [selection] [policy] [--id ID]  record the frozen plan (CredentialRotationPlanned); it waits for approval
  approve ID --reason TEXT               approve (a second, distinct operator when the plan asks for two)
  status [ID] [--watch]                  every rotation, or one with its waves and holds (--watch: redraw until it
                                         completes, is aborted, halts or pauses; exit 0 completed, 4 halted or
                                         paused, 5 aborted)
  pause ID --reason TEXT                 stop dispatch; BMCs in flight run to a safe point
  resume ID --reason TEXT                resume a paused or halted rotation (acknowledges why it stopped)
  abort ID --reason TEXT                 final; BMCs in flight still settle
  skip ID NODE --reason TEXT             leave one BMC out (before it is dispatched)

selection: --sites a,b --racks r1,r2 --vendors V --models M --nodes n1,n2 --refs ref1,ref2 (credential references)
           --latched (only the BMCs the poller's lockout latch holds: a BMC reset to its factory password)
policy:    --cap N (BMCs in flight per site, default 50) --rack-limit N --canary FRACTION --waves 0.02,0.05,...
           --bake DURATION --fence-grace DURATION (default 20s: the poller hears of the fence and its visits end)
           --lockout-threshold N (the BMCs' failed logins before lockout, default 3) --retry-budget N
           --step-deadline DURATION --factory-ref REF (a credential tried once, on a BMC whose version in force is
           refused) --keep-old (do not retire the old versions) --canary-failures N --wave-failure-ratio R
           --cumulative-failure-ratio R --approvals 1|2 --seed N
  --revision N   refuse the verb if the rotation moved past revision N
${connectionUsage}
`;

const options = {
  plan: { type: 'boolean', default: false },
  id: { type: 'string' },
  reason: { type: 'string' },
  revision: { type: 'string' },
  watch: { type: 'boolean', default: false },
  sites: { type: 'string' },
  racks: { type: 'string' },
  vendors: { type: 'string' },
  models: { type: 'string' },
  nodes: { type: 'string' },
  refs: { type: 'string' },
  latched: { type: 'boolean', default: false },
  cap: { type: 'string' },
  'rack-limit': { type: 'string' },
  canary: { type: 'string' },
  waves: { type: 'string' },
  bake: { type: 'string' },
  'fence-grace': { type: 'string' },
  'lockout-threshold': { type: 'string' },
  'retry-budget': { type: 'string' },
  'step-deadline': { type: 'string' },
  'factory-ref': { type: 'string' },
  'keep-old': { type: 'boolean', default: false },
  'canary-failures': { type: 'string' },
  'wave-failure-ratio': { type: 'string' },
  'cumulative-failure-ratio': { type: 'string' },
  approvals: { type: 'string' },
  seed: { type: 'string' },
} as const;

type Values = Record<string, string | boolean | undefined>;

function integer(values: Values, flag: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const raw = values[flag];
  if (typeof raw !== 'string') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new UsageError(`--${flag} must be an integer from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}, got '${raw}'`);
  return value;
}

function fraction(values: Values, flag: string): number | undefined {
  const raw = values[flag];
  if (typeof raw !== 'string') return undefined;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1) throw new UsageError(`--${flag} must be a fraction between 0 and 1, got '${raw}'`);
  return value;
}

function duration(values: Values, flag: string): number | undefined {
  const raw = values[flag];
  if (typeof raw !== 'string') return undefined;
  try {
    return durationMs(raw);
  } catch {
    throw new UsageError(`--${flag} must be a duration (500ms, 90s, 30m, 2h), got '${raw}'`);
  }
}

function list(values: Values, flag: string): string[] | undefined {
  const raw = values[flag];
  return typeof raw === 'string' ? raw.split(',').map((item) => item.trim()).filter(Boolean) : undefined;
}

function defined<T extends Record<string, unknown>>(object: T): Partial<T> | undefined {
  const entries = Object.entries(object).filter(([, value]) => value !== undefined);
  return entries.length ? (Object.fromEntries(entries) as Partial<T>) : undefined;
}

/** The body of `POST /v1/credential-rotations[/preview]` from the flags. */
export function rotationRequestOf(values: Values): Record<string, unknown> {
  const waves = list(values, 'waves')?.map((item) => {
    const value = Number(item);
    if (!Number.isFinite(value) || value <= 0 || value > 1) throw new UsageError(`--waves takes fractions between 0 and 1, got '${item}'`);
    return value;
  });
  const rackLimit = integer(values, 'rack-limit', 1);
  const factory = typeof values['factory-ref'] === 'string' ? values['factory-ref'] : undefined;
  return Object.fromEntries(
    Object.entries({
      selector: defined({ sites: list(values, 'sites'), racks: list(values, 'racks'), vendors: list(values, 'vendors'), models: list(values, 'models'), nodes: list(values, 'nodes'), credentialRefs: list(values, 'refs'), latchedOnly: values.latched === true ? true : undefined }) ?? {},
      seed: integer(values, 'seed', 0),
      capPerSite: integer(values, 'cap', 1),
      inFlightDomainLimits: rackLimit !== undefined ? { rack: rackLimit } : undefined,
      canaryFraction: fraction(values, 'canary'),
      waveFractions: waves,
      bakeMs: duration(values, 'bake'),
      fenceGraceMs: duration(values, 'fence-grace'),
      lockoutThreshold: integer(values, 'lockout-threshold', 2, 20),
      retryBudget: integer(values, 'retry-budget', 0, 5),
      stepDeadlineMs: duration(values, 'step-deadline'),
      factoryFallback: factory ? { credentialRef: factory } : undefined,
      retireOld: values['keep-old'] === true ? false : undefined,
      budgets: defined({ canaryFailures: integer(values, 'canary-failures', 0), waveFailureRatio: fraction(values, 'wave-failure-ratio'), cumulativeFailureRatio: fraction(values, 'cumulative-failure-ratio') }),
      approvalsRequired: integer(values, 'approvals', 1, 2),
    }).filter(([, value]) => value !== undefined),
  );
}

function bar(done: number, total: number, width = 30): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`;
}

function describe(rotation: any): string {
  const outcomes = rotation.outcomes as Record<string, number>;
  const done = Object.values(outcomes).reduce((a, b) => a + b, 0);
  const status = rotation.status === 'awaiting-approval' && rotation.approvals.by.length >= rotation.approvals.required ? 'approved, starting' : rotation.status;
  const lines = [
    `${rotation.rotationId}  ${status}${rotation.stopReason ? ` (${rotation.stopReason})` : ''}  revision ${rotation.revision}`,
    `  ${bar(done, rotation.targets)}  in flight ${rotation.inFlight} (cap ${rotation.cap}, fenced)  rotated ${outcomes.rotated}  kept ${outcomes.kept}  held ${outcomes.held}  skipped ${outcomes.skipped}`,
    `  versions staged for ${rotation.staged} reference(s)${rotation.retired ? '; old versions retired' : ''}; lockout threshold ${rotation.lockoutThreshold}; fence grace ${rotation.fenceGraceMs} ms${rotation.factoryFallback ? `; factory fallback ${rotation.factoryFallback}` : ''}`,
    `  approvals ${rotation.approvals.by.length}/${rotation.approvals.required}${rotation.approvals.by.length ? ` (${rotation.approvals.by.join(', ')})` : ''}; ${rotation.excluded} excluded`,
    ...rotation.waves.map((wave: any) => `  wave ${wave.index}${wave.canary ? ' (canary)' : ''}: ${wave.outcomes}/${wave.size}, ${wave.failures} not rotated${wave.index === rotation.currentWave ? '  <' : ''}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** What an operator does about a BMC the rotation did not rotate, by hold. */
function nextFor(rotationId: string, node: { nodeId: string; hold: string | null; state: string }): string {
  const again = `fleet-ledger credentials rotate --nodes ${node.nodeId}`;
  switch (node.hold) {
    case 'unknown-password':
      return `the BMC takes neither the old nor the new version (it stays fenced: nothing logs in to it); find its password (a factory reset?), then ${again} --factory-ref <ref>, or reset it by hand`;
    case 'account-locked':
      return `the account is locked (fenced: nothing logs in to it until the lockout ends); then ${again}`;
    case 'refused':
      return `the BMC refused the change (its reason is above); the old version stays in force; after fixing it, ${again}`;
    case 'not-applied':
      return `the change did not take; the old version stays in force; ${again}`;
    default:
      return `${again} (rotation ${rotationId})`;
  }
}

export function run(argv: string[]): Promise<number> {
  return runApiCommand('credentials', usage, argv, async () => {
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
      case 'rotate': {
        const body = rotationRequestOf(values);
        if (values.plan) {
          const plan = await callApi(connection, '/v1/credential-rotations/preview', { method: 'POST', body });
          output(connection, plan, () => `${plan.targetCount} BMCs, ${plan.excluded.length} excluded, cap ${plan.capPerSite} per site, fence grace ${plan.fenceGraceMs} ms, lockout threshold ${plan.lockoutThreshold}, seed ${plan.seed}\n${table(plan.waves, ['index', 'canary', 'size'])}${plan.excluded.length ? `excluded:\n${table(plan.excluded.slice(0, 20), ['nodeId', 'reason'])}` : ''}`);
          return exitCodes.ok;
        }
        const rotation = await callApi(connection, '/v1/credential-rotations', { method: 'POST', body: { ...body, ...(values.id ? { rotationId: values.id } : {}) } });
        output(connection, rotation, () => `${describe(rotation)}approve it with: fleet-ledger credentials approve ${rotation.rotationId} --reason "..."\n`);
        return exitCodes.ok;
      }
      case 'approve':
      case 'pause':
      case 'resume':
      case 'abort': {
        const id = required(positionals, 1, 'ID');
        const rotation = await callApi(connection, `/v1/credential-rotations/${encodeURIComponent(id)}/${verb}`, { method: 'POST', body: verbBody() });
        const follow = verb === 'approve' ? `follow it with: fleet-ledger credentials status ${rotation.rotationId} --watch\n` : '';
        output(connection, rotation, () => `${describe(rotation)}${follow}`);
        return exitCodes.ok;
      }
      case 'skip': {
        const id = required(positionals, 1, 'ID');
        const node = required(positionals, 2, 'NODE');
        const rotation = await callApi(connection, `/v1/credential-rotations/${encodeURIComponent(id)}/nodes/${encodeURIComponent(node)}/skip`, { method: 'POST', body: verbBody() });
        output(connection, rotation, () => describe(rotation));
        return exitCodes.ok;
      }
      case 'status': {
        const id = positionals[1];
        if (!id) {
          const { items } = await callApi(connection, '/v1/credential-rotations');
          output(connection, items, () => (items.length ? items.map(describe).join('\n') : 'no credential rotations\n'));
          return exitCodes.ok;
        }
        const live = values.watch && process.stdout.isTTY && !values.json;
        for (;;) {
          const rotation = await callApi(connection, `/v1/credential-rotations/${encodeURIComponent(id)}`);
          if (live) process.stdout.write('\u001b[2J\u001b[H');
          const held = (rotation.nodes as Array<{ nodeId: string; state: string; hold: string | null; cause?: string }>).filter((node) => node.hold);
          const holds = held.slice(0, 20).map((node) => `  ${node.state}: ${node.nodeId} (${node.hold})${node.cause ? `: ${node.cause}` : ''}\n    next: ${nextFor(rotation.rotationId, node)}\n`).join('');
          const more = held.length > 20 ? `  ... and ${held.length - 20} more (--json lists them all)\n` : '';
          const stopped = rotation.status === 'halted' || rotation.status === 'paused' ? `  ${rotation.status}: resume it with fleet-ledger credentials resume ${rotation.rotationId} --reason "...", or end it with fleet-ledger credentials abort ${rotation.rotationId} --reason "..."\n` : '';
          output(connection, rotation, () => `${describe(rotation)}${holds}${more}${stopped}`);
          if (!values.watch) return exitCodes.ok;
          const exit = watchExitCode(rotation.status);
          if (exit !== undefined) return exit;
          await new Promise((resolve) => setTimeout(resolve, 2_000));
        }
      }
      default:
        throw new UsageError(verb ? `unknown verb '${verb}'` : 'missing verb');
    }
  });
}
