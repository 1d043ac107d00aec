/**
 * `fleet-ledger replay <verb>`: the fleet as of any point of the log, through the API (analyst, admin or operator
 * token). `at` asks the query routes with `asOf` and prints the position and the recording time the answer reflects;
 * `timeline` and `diff` (one node's history, what changed between two points) live in `src/cli/replay-history.ts`.
 */
import { callApi, connectionOf, connectionUsage, exitCodes, output, parseCommandArgs, required, runApiCommand, table, UsageError, type ApiConnection } from '../api-client.js';

export const summary = 'time travel: the fleet as of an instant or a log position; a node timeline; a diff between two points';

const usage = `usage: fleet-ledger replay <verb> [options]

  at WHEN WHAT   the fleet as of WHEN: a log position (1 or more) or an RFC 3339 instant with a zone
                 (2026-12-01T03:00:00Z); an instant stands for the last position recorded at or before it.
                 WHAT: nodes | dark | alarms | inventory | drift | compliance | rollouts
                 The answer names the position it reflects and when that position was recorded.
    --by ATTR    inventory: count nodes by this attribute (default manufacturer; model, bmc_firmware, site, ...)
    --all        alarms: also the node alarms folded under a root cause
  timeline NODE [--from WHEN] [--to WHEN]
                 one node's history in log order, its silences as intervals (fleet-ledger replay timeline --help)
  diff --from WHEN [--to WHEN]
                 what changed between two points, with who asked (fleet-ledger replay diff --help)

${connectionUsage}
`;

const options = { by: { type: 'string' }, all: { type: 'boolean', default: false } } as const;

interface AsOfAnswer {
  position: number;
  recordedAt: string;
  instant: string;
}

interface Question {
  /** What the answer is, in the fleet's words. */
  title: string;
  path: string;
  columns: readonly string[];
  /** Lists are paged; the rollouts route answers in one. */
  paged: boolean;
  query?: (values: { by?: string; all?: boolean }) => Record<string, string | undefined>;
  /** A row as printed (the API's row by default). */
  row?: (item: any) => Record<string, unknown>;
}

const questions: Record<string, Question> = {
  nodes: { title: 'nodes', path: '/v1/liveness/nodes', columns: ['nodeId', 'site', 'rack', 'state', 'lastContactAt', 'secondsSinceLastContact', 'consecutiveMisses'], paged: true },
  dark: { title: 'dark nodes', path: '/v1/liveness/dark', columns: ['nodeId', 'site', 'rack', 'darkSince', 'lastContactAt', 'secondsSinceLastContact'], paged: true },
  alarms: {
    title: 'open alarms',
    path: '/v1/alarms',
    columns: ['alarmId', 'kind', 'severity', 'openedAt', 'folded', 'acknowledgedBy', 'summary'],
    paged: true,
    query: (values) => ({ includeFolded: values.all ? 'true' : undefined }),
    row: (alarm) => ({ ...alarm, folded: alarm.folded.length }),
  },
  inventory: { title: 'nodes by attribute', path: '/v1/inventory', columns: ['value', 'nodes'], paged: true, query: (values) => ({ by: values.by ?? 'manufacturer' }) },
  drift: { title: 'drift findings', path: '/v1/drift', columns: ['nodeId', 'field', 'kind', 'declared', 'observed', 'since'], paged: true },
  compliance: { title: 'firmware compliance', path: '/v1/compliance', columns: ['component', 'atBaseline', 'above', 'below', 'unknown'], paged: true },
  rollouts: {
    title: 'rollouts',
    path: '/v1/rollouts',
    columns: ['rolloutId', 'status', 'component', 'version', 'targets', 'currentWave', 'updated', 'failed', 'stopReason'],
    paged: false,
    row: (rollout) => ({
      ...rollout,
      component: rollout.firmware?.component,
      version: rollout.firmware?.version,
      updated: (rollout.outcomes?.updated ?? 0) + (rollout.outcomes?.['already-at-target'] ?? 0),
      failed: rollout.outcomes?.failed,
    }),
  },
};

/** Every page of a question as of `when`; every page names the same point (an asOf stands for a fixed position). */
async function askAsOf(connection: ApiConnection, question: Question, when: string, query: Record<string, string | undefined>): Promise<{ asOf: AsOfAnswer; items: any[] }> {
  const items: any[] = [];
  let asOf: AsOfAnswer | undefined;
  let cursor: string | undefined;
  do {
    const page = await callApi<{ items: any[]; nextCursor?: string | null; asOf: AsOfAnswer }>(connection, question.path, {
      query: { ...query, asOf: when, ...(question.paged ? { limit: 1000, cursor } : {}) },
    });
    asOf ??= page.asOf;
    items.push(...page.items);
    cursor = question.paged ? (page.nextCursor ?? undefined) : undefined;
  } while (cursor);
  return { asOf: asOf!, items };
}

function describePoint(asOf: AsOfAnswer): string {
  const asked = asOf.instant !== asOf.recordedAt ? `, asked ${asOf.instant}` : '';
  return `as of position ${asOf.position} (recorded ${asOf.recordedAt}${asked})`;
}

/** The history verbs, written beside this file; loaded only when used. */
interface ReplayHistory {
  runTimeline(argv: string[]): Promise<number>;
  runDiff(argv: string[]): Promise<number>;
}

async function replayHistory(): Promise<ReplayHistory> {
  return (await import('../replay-history.js')) as ReplayHistory;
}

export async function run(argv: string[]): Promise<number> {
  switch (argv[0]) {
    case 'timeline':
      return (await replayHistory()).runTimeline(argv.slice(1));
    case 'diff':
      return (await replayHistory()).runDiff(argv.slice(1));
    default:
      return runApiCommand('replay', usage, argv, async () => {
        const { values, positionals } = parseCommandArgs(argv, options);
        if (values.help) {
          process.stdout.write(usage);
          return exitCodes.ok;
        }
        if (positionals[0] !== 'at') throw new UsageError(positionals[0] ? `unknown verb '${positionals[0]}'` : 'missing verb');
        const when = required(positionals, 1, 'WHEN');
        const what = required(positionals, 2, 'WHAT');
        if (positionals.length > 3) throw new UsageError(`unexpected argument '${positionals[3]}'`);
        const question = questions[what];
        if (!question) throw new UsageError(`WHAT must be one of ${Object.keys(questions).join(', ')}, got '${what}'`);
        if (values.by !== undefined && what !== 'inventory') throw new UsageError('--by is for inventory');
        if (values.all && what !== 'alarms') throw new UsageError('--all is for alarms');
        const connection = connectionOf(values);
        const answer = await askAsOf(connection, question, when, question.query?.(values) ?? {});
        output(connection, answer, () => {
          const rows = answer.items.map((item) => question.row?.(item) ?? item);
          return `${question.title} ${describePoint(answer.asOf)}: ${rows.length}\n${table(rows, question.columns)}`;
        });
        return exitCodes.ok;
      });
  }
}
