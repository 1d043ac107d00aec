/**
 * `fleet-ledger sim`: runs the fleet simulator in the foreground, prints its control URL and a stats line every
 * few seconds, and stops cleanly on SIGINT or SIGTERM.
 */
import { loadScenario, SimError, startSimulator, type AddressingChoice, type SimulatorOptions } from '../../sim/index.ts';
import { parseCommand } from '../parse-command.js';

export const summary = 'run the fleet simulator: N BMCs generated from vendor profiles (or real captures), with faults on a schedule';

const USAGE = `usage: fleet-ledger sim (--scenario <file> | --bmcs N [--mockup <folder>]...) [options]

  --scenario <file>        YAML or JSON scenario (see examples/scenario-demo.yaml)
  --bmcs N                 fleet size without a scenario
  --mockup <name|folder>   vendor profile to build BMCs from (repeatable; default: every profile: dell,
                           dell_multi_dpu, hpe, supermicro, nvidia_gb200, nvidia_gh200, nvidia_gbswitch,
                           nvidia_dpu), or a path to a Mockup-Creator folder
  --captures DIR           serve real Mockup-Creator captures instead: DIR is one capture, or a folder of
                           them (then --mockup names folders inside it; default: all of them)
  --port P                 port for every BMC and the control API (default: scenario's, else a free one)
  --addressing MODE        auto | per-address | wildcard | path-prefix (default auto)
  --clock-factor F         simulated seconds per real second (default 1)
  --latency-scale S        multiply modelled response times (0 answers at once; default 1)
  --event-heartbeat S      a heartbeat every S seconds on every event stream (no captured controller
                           advertises one; default none)
  --stats-every SECONDS    how often to print a stats line (default 10; 0 never)
  --seed N                 seed for identities, firmware mix and topology
  --tls                    serve every BMC over HTTPS with its own self-signed certificate, TLS versions,
                           handshake time and keep-alive of its generation (the control API stays http)
`;

function behaviourOf(latencyScale: number | undefined, heartbeatS: number | undefined): Pick<SimulatorOptions, 'behaviour'> {
  if (latencyScale === undefined && heartbeatS === undefined) return {};
  return { behaviour: { ...(latencyScale !== undefined ? { latencyScale } : {}), ...(heartbeatS !== undefined ? { eventHeartbeatMs: heartbeatS * 1000 } : {}) } };
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand('sim', argv, {
    scenario: { type: 'string' },
    bmcs: { type: 'string' },
    mockup: { type: 'string', multiple: true },
    captures: { type: 'string' },
    port: { type: 'string' },
    addressing: { type: 'string' },
    'clock-factor': { type: 'string' },
    'latency-scale': { type: 'string' },
    'event-heartbeat': { type: 'string' },
    'stats-every': { type: 'string' },
    seed: { type: 'string' },
    tls: { type: 'boolean' },
  }, USAGE, false, { scenario: { kind: 'file', what: 'scenario file' }, captures: { kind: 'directory', what: 'captures folder' } });
  // --mockup names a vendor profile or a folder: a name is not a path, so it is not checked as one here.
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  const number = (name: string, value: string | undefined): number | undefined => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0) throw new SimError('SIM_SCENARIO_INVALID', `--${name}: not a non-negative number: ${value}`);
    return n;
  };
  let simulatorOptions: SimulatorOptions;
  let statsEvery: number;
  try {
    if ((values.scenario === undefined) === (values.bmcs === undefined)) {
      process.stderr.write(`fleet-ledger sim: give --scenario or --bmcs (one of them)\n${USAGE}`);
      return 2;
    }
    const addressing = values.addressing as AddressingChoice | undefined;
    if (addressing && !['auto', 'per-address', 'wildcard', 'path-prefix'].includes(addressing)) {
      throw new SimError('SIM_SCENARIO_INVALID', `--addressing: must be auto, per-address, wildcard or path-prefix, not ${addressing}`);
    }
    const latencyScale = number('latency-scale', values['latency-scale']);
    simulatorOptions = {
      ...(values.scenario ? { scenario: loadScenario(values.scenario) } : {}),
      ...(values.bmcs !== undefined ? { bmcs: number('bmcs', values.bmcs) } : {}),
      ...(values.mockup ? { mockups: values.mockup } : {}),
      ...(values.captures ? { captures: values.captures } : {}),
      ...(values.port !== undefined ? { port: number('port', values.port) } : {}),
      ...(addressing ? { addressing } : {}),
      ...(values['clock-factor'] !== undefined ? { clockFactor: number('clock-factor', values['clock-factor']) } : {}),
      ...(values.seed !== undefined ? { seed: number('seed', values.seed) } : {}),
      ...behaviourOf(latencyScale, number('event-heartbeat', values['event-heartbeat'])),
      ...(values.tls ? { tls: true } : {}),
    };
    statsEvery = number('stats-every', values['stats-every']) ?? 10;
  } catch (error) {
    process.stderr.write(`fleet-ledger sim: ${(error as Error).message}\n`);
    return 2;
  }

  const started = performance.now();
  const simulator = await startSimulator(simulatorOptions);
  const rss = (): string => `${Math.round(process.memoryUsage().rss / 1048576)} MiB`;
  process.stdout.write(
    `fleet-ledger sim: ${simulator.bmcs.length} BMCs (${simulator.addressing}) up in ${Math.round(performance.now() - started)} ms, rss ${rss()}\n` +
      `control ${simulator.controlUrl}  (GET /sim/fleet, GET /sim/stats, POST /sim/faults)\n` +
      `first BMC ${simulator.bmcs[0]?.baseUrl ?? '-'}\n`,
  );
  const printStats = (): void => {
    const stats = simulator.stats();
    process.stdout.write(
      `${stats.at} bmcs=${stats.bmcs} dark=${stats.dark} sessions=${stats.sessionsNow} requests=${stats.requests} ` +
        `rejections=${stats.rejections} resets=${stats.resets} 304=${stats.notModified} authFailures=${stats.authFailures} ` +
        `updates=${stats.updates}/${stats.updatesFailed} faults=${stats.faultsActive} rss=${rss()}\n`,
    );
  };
  const interval = statsEvery > 0 ? setInterval(printStats, statsEvery * 1000) : undefined;

  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  if (interval) clearInterval(interval);
  printStats();
  await simulator.close();
  process.stdout.write('fleet-ledger sim: stopped\n');
  return 0;
}
