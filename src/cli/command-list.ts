/**
 * The commands of `fleet-ledger`, each with its one-line summary and a loader. `--help` prints this table without
 * loading any command, and a command loads only its own module (and what that imports), so `fleet-ledger query`
 * never pays for the embedded PostgreSQL or the simulator. Each command module exports the same `summary`
 * (`test/cli/command-list.unit.test.ts` holds the two equal) and `run(argv)`.
 */
export interface CliCommand {
  summary: string;
  /** Runs the command and resolves to the process exit code. */
  run: (argv: string[]) => Promise<number>;
}

export interface CommandEntry {
  summary: string;
  load: () => Promise<CliCommand>;
}

export const commands = {
  agent: {
    summary: 'collect in-band GPU signals (nvidia-smi, XIDs) and POST them to a ledger',
    load: () => import('./commands/agent.js'),
  },
  alarms: {
    summary: 'open alarms (root causes fold the node alarms they explain), one alarm, acknowledge, through the API',
    load: () => import('./commands/alarms.js'),
  },
  audit: {
    summary: 'the transparency log: signed checkpoints, inclusion and consistency proofs, export, and offline verify',
    load: () => import('./commands/audit.js'),
  },
  centre: {
    summary: 'the fleet centre: subscribes to every site ledger (logical replication), witnesses their logs, answers fleet-wide',
    load: () => import('./commands/centre.js'),
  },
  cluster: {
    summary: 'the processes sharing the database: shards each polls, lease epochs and expiries, hand-overs, through the API',
    load: () => import('./commands/cluster.js'),
  },
  credentials: {
    summary: 'credential rotation: rotate (plan, start), approve, status (a live progress bar), pause, resume, abort, skip a BMC',
    load: () => import('./commands/credentials.js'),
  },
  ebom: {
    summary: 'import an EBOM (CSV or JSON) as one decision: every row valid, or nothing imported',
    load: () => import('./commands/ebom.js'),
  },
  events: {
    summary: 'read the log through the API: events, one stream, verify the hash chain, tail the live feed',
    load: () => import('./commands/events.js'),
  },
  fleet: {
    summary: 'the fleet through the centre: fleet-wide rollouts, one child rollout per site, planned, approved, paused and shown',
    load: () => import('./commands/fleet.js'),
  },
  history: {
    summary: "one node's history as intervals: liveness states, observed inventory and alarms, through the API",
    load: () => import('./commands/history.js'),
  },
  inspect: {
    summary: 'print the normalized observation of a Redfish BMC (or a Mockup-Creator folder with --mockup)',
    load: () => import('./commands/inspect.js'),
  },
  nodes: {
    summary: 'node intents (register, cordon, quarantine, maintenance, ...) and node views, through the API',
    load: () => import('./commands/nodes.js'),
  },
  provision: {
    summary: 'provisioning: start (BOM validation, firmware baseline, burn-in), status, release from quarantine, abandon',
    load: () => import('./commands/provision.js'),
  },
  query: {
    summary: 'query the fleet through the API: liveness, dark nodes, gaps, inventory, heterogeneity, drift, compliance',
    load: () => import('./commands/query.js'),
  },
  rebuild: {
    summary: 'rebuild one projection (or --all) from zero, optionally only up to --to POSITION',
    load: () => import('./commands/rebuild.js'),
  },
  replay: {
    summary: 'time travel: the fleet as of an instant or a log position; a node timeline; a diff between two points',
    load: () => import('./commands/replay.js'),
  },
  rollout: {
    summary: 'firmware rollouts: plan (preview), start, approve, status (a live progress bar), pause, resume, abort, node verbs',
    load: () => import('./commands/rollout.js'),
  },
  sim: {
    summary: 'run the fleet simulator: N BMCs generated from vendor profiles (or real captures), with faults on a schedule',
    load: () => import('./commands/sim.js'),
  },
  start: {
    summary: 'start the ledger (embedded PostgreSQL or DATABASE_URL) with a simulated fleet, the poller and the projections',
    load: () => import('./commands/start.js'),
  },
  witness: {
    summary: 'witness a ledger: check each new checkpoint extends the last one seen, co-sign it, refuse forks and rollbacks',
    load: () => import('./commands/witness.js'),
  },
} satisfies Record<string, CommandEntry>;

export type CommandName = keyof typeof commands;

export const commandNames = Object.keys(commands).sort() as CommandName[];

export function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(commands, name);
}
