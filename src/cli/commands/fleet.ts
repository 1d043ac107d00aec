/**
 * `fleet-ledger fleet rollout <verb>`: fleet-wide firmware rollouts through the centre (`--url` the centre's API): one
 * child rollout per site, requested, approved, paused, resumed or aborted on each site through the centre, each run
 * by its site's own rollout saga (src/federation/fleet-rollouts.ts).
 */
import { callApi, connectionOf, connectionUsage, exitCodes, output, parseCommandArgs, required, runApiCommand, table, UsageError } from '../api-client.js';
import { rolloutRequestOf, rolloutRequestOptions, rolloutRequestUsage } from '../rollout-request.js';

export const summary = 'the fleet through the centre: fleet-wide rollouts, one child rollout per site, planned, approved, paused and shown';

const usage = `usage: fleet-ledger fleet rollout <verb> [options]      (--url: the centre's API, e.g. http://127.0.0.1:8090)

  plan ID --component C --version V --image URI [policy] [--on-sites a,b]
                       a child rollout ID.<site> on every site (or those named), each planned by its site from its
                       own fleet; planning again with the same request requests only the children not yet requested
  approve|pause|resume|abort ID --reason TEXT [--idempotency-key K]
                       the verb on every child; a site that is cut is refused (retryable), the others go on
  show ID              each child as its site's log says, labelled "as of" the site's last heartbeat when it is cut
  list                 the fleet rollouts planned at the centre

policy (each child's; --sites is narrowed to the child's site):
${rolloutRequestUsage}
  --on-sites a,b       the sites to plan children on (default: every site of the centre)
${connectionUsage}
exit codes: 4 when a site did not take the verb (its child is named)
`;

const options = { ...rolloutRequestOptions, reason: { type: 'string' }, 'on-sites': { type: 'string' }, 'idempotency-key': { type: 'string' } } as const;

interface ChildAnswer {
  site: string;
  rolloutId: string;
  outcome: string;
  status: number;
  answer: { error?: { code: string; message: string } } | null;
}

function describeChildren(children: ChildAnswer[]): string {
  return table(children.map((child) => ({ site: child.site, rollout: child.rolloutId, outcome: child.outcome, detail: child.answer?.error ? `${child.answer.error.code}: ${child.answer.error.message}` : '' })), ['site', 'rollout', 'outcome', 'detail']);
}

export function run(argv: string[]): Promise<number> {
  return runApiCommand('fleet', usage, argv, async () => {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (values.help) {
      process.stdout.write(usage);
      return exitCodes.ok;
    }
    const connection = connectionOf({ ...values, url: values.url ?? process.env.FLEET_LEDGER_CENTRE_URL ?? 'http://127.0.0.1:8090' });
    const subject = required(positionals, 0, 'rollout');
    if (subject !== 'rollout') throw new UsageError(`unknown subject '${subject}' (rollout)`);
    const verb = required(positionals, 1, 'verb');
    const children = (answer: { complete: boolean; children: ChildAnswer[] }): number => {
      output(connection, answer, () => describeChildren(answer.children));
      return answer.complete ? exitCodes.ok : 4;
    };
    switch (verb) {
      case 'plan': {
        const id = required(positionals, 2, 'ID');
        const sites = values['on-sites']?.split(',').map((site) => site.trim()).filter((site) => site.length > 0);
        return children(await callApi(connection, '/v1/fleet/rollouts', { method: 'POST', body: { fleetRolloutId: id, request: rolloutRequestOf(values), ...(sites ? { sites } : {}) } }));
      }
      case 'approve':
      case 'pause':
      case 'resume':
      case 'abort': {
        const id = required(positionals, 2, 'ID');
        if (!values.reason) throw new UsageError('--reason is required');
        const headers = values['idempotency-key'] ? { 'idempotency-key': values['idempotency-key'] } : undefined;
        return children(await callApi(connection, `/v1/fleet/rollouts/${encodeURIComponent(id)}/${verb}`, { method: 'POST', body: { reason: values.reason }, ...(headers ? { headers } : {}) }));
      }
      case 'show': {
        const id = required(positionals, 2, 'ID');
        const answer = await callApi(connection, `/v1/fleet/rollouts/${encodeURIComponent(id)}`);
        output(connection, answer, () =>
          `${id}: asked by ${answer.requestedBy} at ${answer.requestedAt}\n${table(
            answer.children.map((child: { site: string; state: string; asOf: string | null; rolloutId: string; rollout: { status: string; revision: number; approvals: { by: string[] } } | null }) => ({
              site: child.site,
              rollout: child.rolloutId,
              status: child.rollout?.status ?? '(not in its log yet)',
              revision: child.rollout?.revision ?? null,
              approvedBy: child.rollout?.approvals.by.join(' ') ?? '',
              shown: child.state === 'live' ? 'live' : `${child.state}, as of ${child.asOf ?? '?'}`,
            })),
            ['site', 'rollout', 'status', 'revision', 'approvedBy', 'shown'],
          )}`,
        );
        return exitCodes.ok;
      }
      case 'list': {
        const answer = await callApi(connection, '/v1/fleet/rollouts');
        output(connection, answer, () => table(answer.rollouts, ['fleetRolloutId', 'sites', 'requestedBy', 'requestedAt']));
        return exitCodes.ok;
      }
      default:
        throw new UsageError(`unknown verb '${verb}' (plan, approve, pause, resume, abort, show, list)`);
    }
  });
}
