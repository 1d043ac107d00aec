/**
 * `fleet-ledger inspect`: prints the normalized observation of one Redfish service, the way an operator checks a
 * new model before it joins the fleet. `--mockup <folder>` serves a Mockup-Creator folder on an ephemeral
 * loopback port, inspects it, and closes it.
 */
import { isDriverError, RedfishDriver, startMockupServer, type MockupServer } from '../../drivers/index.js';
import { assertNever, type DriverObservation } from '../../../events/index.js';
import { parseCommand } from '../parse-command.js';

export const summary = 'print the normalized observation of a Redfish BMC (or a Mockup-Creator folder with --mockup)';

const usage = `usage: fleet-ledger inspect <base-url> [--user U --password P] [--insecure] [--timeout MS] [--json]
       fleet-ledger inspect --mockup <folder> [--json]

  <base-url>     https://bmc.example (credentials also from FLEET_BMC_USER / FLEET_BMC_PASSWORD)
  --insecure     accept a self-signed BMC certificate
  --json         print the observations as JSON (default: a readable summary)
`;

function humanSummary(dialect: string, observations: DriverObservation[], authentication: string): string {
  const lines: string[] = [];
  let unrecognized = 0;
  let unreadable = 0;
  for (const observation of observations) {
    unrecognized += observation.data.unrecognized.length;
    unreadable += observation.data.unreadable?.length ?? 0;
    switch (observation.type) {
      case 'NodeInventoryObserved': {
        const { system, bmc, biosVersion, cpus, gpus, memory, nics, dpus, sessionLimitHint, systems, bmcs } = observation.data;
        lines.push(`system     ${[system.manufacturer, system.model].filter(Boolean).join(' ') || '?'}  serial ${system.serialNumber ?? '?'}  uuid ${system.uuid ?? '?'}`);
        if (systems.length > 1) lines.push(`systems    ${systems.map((item) => item.id).join(', ')}`);
        lines.push(`bmc        ${bmc.model ?? '?'} firmware ${bmc.firmwareVersion ?? '?'}${bmcs.length > 1 ? `  (${bmcs.length} managers)` : ''}`);
        lines.push(`bios       ${biosVersion ?? '?'}`);
        if (cpus) lines.push(`cpus       ${cpus.count}  ${cpus.models.join('; ')}`);
        if (gpus) lines.push(`gpus       ${gpus.count}  ${gpus.models.join('; ')}`);
        if (memory) lines.push(`memory     ${memory.moduleCount} modules${memory.totalGiB !== undefined ? `, ${memory.totalGiB} GiB` : ''}`);
        if (nics) lines.push(`nics       ${nics.count}  ${nics.models.join('; ')}`);
        if (dpus) lines.push(`dpus       ${dpus.count}  ${dpus.models.join('; ')}`);
        if (sessionLimitHint !== undefined) lines.push(`sessions   limit hint ${sessionLimitHint}`);
        break;
      }
      case 'FirmwareInventoryObserved':
        lines.push(`firmware   ${observation.data.components.length} components`);
        break;
      case 'PowerStateObserved':
        lines.push(`power      ${observation.data.powerState}`);
        break;
      case 'HealthObserved':
        lines.push(`health     ${observation.data.health}  (${observation.data.conditions.length} conditions)`);
        for (const condition of observation.data.conditions.slice(0, 10)) {
          lines.push(`           - ${condition.origin}: ${condition.health ?? condition.severity ?? ''} ${condition.message ?? condition.state ?? ''}`.trimEnd());
        }
        break;
      case 'SensorsObserved': {
        const { temperatures, fans, powerSupplies, powerConsumedWatts } = observation.data;
        const hottest = temperatures.reduce<number | null>((max, t) => (t.reading !== null && (max === null || t.reading > max) ? t.reading : max), null);
        lines.push(`sensors    ${temperatures.length} temperatures (max ${hottest ?? '?'} Cel), ${fans.length} fans, ${powerSupplies.length} PSUs${powerConsumedWatts != null ? `, ${powerConsumedWatts} W` : ''}`);
        break;
      }
      case 'GpuTelemetryObserved':
      case 'GpuXidObserved':
      case 'NetworkDeviceObserved':
      case 'SelEntriesObserved':
        // Counted in the unrecognized and unreadable totals only; `--json` prints them whole.
        break;
      default:
        assertNever(observation, 'observation');
    }
  }
  return [`dialect    ${dialect}  (auth: ${authentication})`, ...lines, `unrecognized paths: ${unrecognized}   unreadable resources: ${unreadable}`, ''].join('\n');
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand(
    'inspect',
    argv,
    {
      user: { type: 'string' },
      password: { type: 'string' },
      insecure: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      mockup: { type: 'string' },
      timeout: { type: 'string' },
    },
    usage,
    true,
    { mockup: { kind: 'directory', what: 'Mockup-Creator capture folder' } },
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  if (!values.mockup && positionals.length !== 1) {
    process.stderr.write(`inspect: give one <base-url> or --mockup <folder>\n${usage}`);
    return 2;
  }
  const timeout = values.timeout ? Number(values.timeout) : 15_000;
  if (!Number.isFinite(timeout) || timeout <= 0) {
    process.stderr.write('inspect: --timeout must be a positive number of milliseconds\n');
    return 2;
  }
  let mockup: MockupServer | undefined;
  let driver: RedfishDriver | undefined;
  try {
    let baseUrl = positionals[0] ?? '';
    let username = values.user ?? process.env.FLEET_BMC_USER;
    let password = values.password ?? process.env.FLEET_BMC_PASSWORD;
    if (values.mockup) {
      mockup = await startMockupServer({ folder: values.mockup, acceptAnyCredentials: true });
      baseUrl = mockup.url;
      username ??= 'inspect';
      password ??= 'inspect';
    }
    driver = new RedfishDriver({
      baseUrl,
      requestTimeoutMs: timeout,
      insecure: values.insecure,
      maxConcurrency: values.mockup ? 4 : 2,
      ...(username !== undefined ? { username } : {}),
      ...(password !== undefined ? { password } : {}),
      ...(username === undefined && password === undefined ? { authMode: 'none' as const } : {}),
    });
    const observations = await driver.observe();
    const dialect = driver.dialect?.id ?? 'unknown';
    const authentication = driver.sessionPath ? `session at ${driver.sessionPath}` : driver.authentication;
    if (values.json) process.stdout.write(`${JSON.stringify({ dialect, authentication: driver.authentication, sessionPath: driver.sessionPath ?? null, observations }, null, 2)}\n`);
    else process.stdout.write(humanSummary(dialect, observations, authentication));
    return 0;
  } catch (error) {
    if (isDriverError(error)) {
      process.stderr.write(`inspect: ${error.code} (${error.retryable ? 'retryable' : 'not retryable'}): ${error.message}\n`);
      if (values.json) process.stdout.write(`${JSON.stringify({ error: error.toJSON() }, null, 2)}\n`);
      return 1;
    }
    process.stderr.write(`inspect: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await driver?.close();
    await mockup?.close();
  }
}
