/**
 * The IPMI fallback `DeviceDriver`, through `ipmitool -I lanplus`. Used where a BMC has no usable Redfish.
 *
 * Commands run one after another (IPMI BMCs handle few sessions; each ipmitool run opens and closes its own RMCP+
 * session). The password travels in the `IPMI_PASSWORD` environment variable (`-E`), never on the command line
 * where `ps` would show it. `mc info` and `chassis status` must answer; `fru print`, `sdr elist` and
 * `dcmi power reading` are optional (many BMCs lack DCMI) and their failure is recorded as unreadable.
 */
import { execFile } from 'node:child_process';
import type {
  DriverObservation,
  HealthObservedData,
  NodeInventoryObservedData,
  SensorsObservedData,
  UnrecognizedValue,
} from '../../../events/index.js';
import type { DeviceDriver, DriverCapabilities, ObserveOptions } from '../device-driver.js';
import { DriverError, toDriverError } from '../driver-error.js';
import { parseChassisStatus, parseDcmiPowerReading, parseFru, parseMcInfo, parseSdr, summarizeSensors } from './ipmitool-parsers.js';
import { canonicalVendor } from '../vendor-name.js';

export interface IpmiDriverOptions {
  host: string;
  port?: number;
  username: string;
  password: string;
  /** RMCP+ cipher suite (`-C`); ipmitool's default when absent. */
  cipherSuite?: number;
  /** Deadline per ipmitool run. Default 15 s. */
  commandTimeoutMs?: number;
  /** The ipmitool binary. Default `ipmitool` on PATH. */
  ipmitool?: string;
}

const DIALECT = 'ipmi-lanplus';

export class IpmiDriver implements DeviceDriver {
  readonly protocol = 'ipmi' as const;
  readonly capabilities: DriverCapabilities = {
    inventory: true,
    firmwareInventory: false,
    powerState: true,
    healthAndSensors: true,
    firmwareUpdate: false,
    powerControl: false,
  };

  constructor(private readonly options: IpmiDriverOptions) {}

  /** Runs one ipmitool command; resolves with stdout or rejects with a `DriverError`. */
  run(command: readonly string[], verbose = false): Promise<string> {
    const args = [...(verbose ? ['-v'] : []), '-I', 'lanplus', '-H', this.options.host, '-p', String(this.options.port ?? 623), '-U', this.options.username, '-E'];
    if (this.options.cipherSuite !== undefined) args.push('-C', String(this.options.cipherSuite));
    args.push(...command);
    const timeout = this.options.commandTimeoutMs ?? 15_000;
    const commandText = `ipmitool ${command.join(' ')}`;
    return new Promise((resolve, reject) => {
      execFile(
        this.options.ipmitool ?? 'ipmitool',
        args,
        { timeout, killSignal: 'SIGKILL', env: { ...process.env, IPMI_PASSWORD: this.options.password }, maxBuffer: 8 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (!error) {
            resolve(stdout);
            return;
          }
          const details = { command: commandText, stderr: String(stderr).slice(0, 500), exitCode: typeof error.code === 'number' ? error.code : null };
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') reject(new DriverError('DRIVER_TOOL_MISSING', 'ipmitool is not installed', details));
          else if (error.killed) reject(new DriverError('DRIVER_TIMEOUT', `${commandText} passed its ${timeout} ms deadline`, { ...details, deadlineMs: timeout }));
          else if (/RAKP \d message indicates an error|unauthorized name|HMAC is invalid|invalid password|insufficient privilege/i.test(String(stderr))) {
            reject(new DriverError('DRIVER_AUTH', `${commandText}: credentials refused`, details));
          } else if (/Unable to establish|No response|Get Auth Capabilities error|Error: Unable/i.test(String(stderr))) {
            reject(new DriverError('DRIVER_UNREACHABLE', `${commandText}: no IPMI session with ${this.options.host}`, details));
          } else reject(new DriverError('DRIVER_COMMAND_FAILED', `${commandText} failed: ${String(stderr).trim().slice(0, 200)}`, details));
        },
      );
    });
  }

  async observe(options: ObserveOptions = {}): Promise<DriverObservation[]> {
    try {
      const started = performance.now();
      const unreadable: Array<{ path: string; code: string }> = [];
      const optional = async (command: string[]): Promise<string | undefined> => {
        try {
          return await this.run(command);
        } catch (error) {
          const driverError = toDriverError(error);
          // Deadlines and lost sessions concern the whole BMC; only a refused command is local.
          if (driverError.code !== 'DRIVER_COMMAND_FAILED') throw driverError;
          unreadable.push({ path: command.join(' '), code: driverError.code });
          return undefined;
        }
      };
      // The first contact runs verbose: only then does ipmitool say *why* RMCP+ failed (RAKP 2 errors mean bad
      // credentials, which must not be retried; silence means unreachable).
      const mcInfo = parseMcInfo(await this.run(['mc', 'info'], true));
      const chassis = parseChassisStatus(await this.run(['chassis', 'status']));
      const fruText = await optional(['fru', 'print']);
      const sdrText = await optional(['sdr', 'elist']);
      const dcmiText = await optional(['dcmi', 'power', 'reading']);
      const latencyMs = Math.round(performance.now() - started);

      const fru = fruText ? parseFru(fruText) : {};
      const sdr = sdrText ? parseSdr(sdrText) : { sensors: [], unrecognized: [] as UnrecognizedValue[] };
      const dcmi = dcmiText ? parseDcmiPowerReading(dcmiText) : {};
      const base = (unrecognized: UnrecognizedValue[]) => ({
        source: 'ipmi' as const,
        dialect: DIALECT,
        unrecognized,
        ...(unreadable.length > 0 ? { unreadable } : {}),
        latencyMs,
      });

      const system: NodeInventoryObservedData['system'] = {};
      if (fru.manufacturer) system.manufacturer = fru.manufacturer;
      if (fru.model) system.model = fru.model;
      if (fru.serialNumber) system.serialNumber = fru.serialNumber;
      if (fru.partNumber) system.sku = fru.partNumber;
      const bmc: NodeInventoryObservedData['bmc'] = {};
      const bmcVendor = canonicalVendor(mcInfo.manufacturerName);
      if (bmcVendor) bmc.manufacturer = bmcVendor;
      // ipmitool prints `Unknown (0xF02)` for products it has no name for; the numeric id is more useful then.
      if (mcInfo.productName && !/^Unknown\b/.test(mcInfo.productName)) bmc.model = mcInfo.productName;
      else if (mcInfo.productId) bmc.model = `product ${mcInfo.productId}`;
      if (mcInfo.firmwareRevision) bmc.firmwareVersion = mcInfo.firmwareRevision;
      const inventory: NodeInventoryObservedData = { ...base([]), system, systems: [system], bmc, bmcs: [bmc] };

      const summary = summarizeSensors(sdr.sensors);
      const sensors: SensorsObservedData = {
        ...base(sdr.unrecognized),
        ...summary,
        ...(dcmi.instantaneousWatts !== undefined ? { powerConsumedWatts: dcmi.instantaneousWatts } : {}),
      };

      const conditions: HealthObservedData['conditions'] = [
        ...chassis.faults.map((fault) => ({ origin: 'chassis status', health: 'Critical' as const, message: fault })),
        ...sdr.sensors
          .filter((sensor) => sensor.health === 'Warning' || sensor.health === 'Critical')
          .map((sensor) => ({ origin: `sdr/${sensor.name}`, health: sensor.health!, ...(sensor.state ? { message: sensor.state } : {}) })),
      ];
      const healths = [...sdr.sensors.map((sensor) => sensor.health), ...conditions.map((condition) => condition.health)];
      const health: HealthObservedData['health'] = healths.includes('Critical')
        ? 'Critical'
        : healths.includes('Warning')
          ? 'Warning'
          : healths.includes('OK') || chassis.powerOn !== undefined
            ? 'OK'
            : 'Unknown';

      const observations: DriverObservation[] = [
        { type: 'NodeInventoryObserved', data: inventory },
        { type: 'PowerStateObserved', data: { ...base([]), powerState: chassis.powerOn === undefined ? 'Unknown' : chassis.powerOn ? 'On' : 'Off' } },
        { type: 'HealthObserved', data: { ...base([]), health, conditions } },
        { type: 'SensorsObserved', data: sensors },
      ];
      return options.only ? observations.filter((observation) => options.only!.includes(observation.type)) : observations;
    } catch (error) {
      throw toDriverError(error);
    }
  }

  async close(): Promise<void> {
    // Every ipmitool run closes its own session; nothing is held between calls.
  }
}
