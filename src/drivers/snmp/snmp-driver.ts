/**
 * The SNMP `DeviceDriver` for PDUs and switches (SNMP v2c through the `net-snmp` package): system identity from
 * SNMPv2-MIB, interface states from IF-MIB, and outlet states where a dialect record knows the vendor's MIB.
 * Values of an unexpected type are kept in `unrecognized`; a silent agent is `DRIVER_TIMEOUT`.
 */
import snmp, { type Session, type Varbind } from 'net-snmp';
import { presentText } from '../placeholder.js';
import type { DriverObservation, NetworkDeviceObservedData, UnrecognizedValue } from '../../../events/index.js';
import type { DeviceDriver, DriverCapabilities } from '../device-driver.js';
import { DriverError } from '../driver-error.js';

export interface SnmpDriverOptions {
  host: string;
  port?: number;
  community: string;
  /** Deadline per SNMP request. Default 2 s. */
  timeoutMs?: number;
  retries?: number;
  /**
   * Everything one `observe()` or `ping()` does, all requests together: when it aborts, the call fails with
   * `DRIVER_TIMEOUT` at once and the session is closed (a slow agent cannot hold a poller's slot for long).
   */
  deadline?: AbortSignal;
}

/** A PDU/switch vendor record: how to recognize it and where its outlet table lives. */
export interface SnmpDialect {
  id: string;
  sysObjectIdPrefix?: string;
  outlets?: { nameColumn: string; stateColumn: string; on: number; off: number };
  fixture?: string;
}

export const snmpDialects: readonly SnmpDialect[] = [
  {
    id: 'apc-rpdu',
    sysObjectIdPrefix: '1.3.6.1.4.1.318.',
    // PowerNet-MIB rPDUOutletStatusOutletName / rPDUOutletStatusOutletState (1 = on, 2 = off).
    outlets: { nameColumn: '1.3.6.1.4.1.318.1.1.12.3.5.1.1.2', stateColumn: '1.3.6.1.4.1.318.1.1.12.3.5.1.1.4', on: 1, off: 2 },
  },
  { id: 'generic-snmp' },
];

const SYSTEM = {
  sysDescr: '1.3.6.1.2.1.1.1.0',
  sysObjectId: '1.3.6.1.2.1.1.2.0',
  sysUpTime: '1.3.6.1.2.1.1.3.0',
  sysContact: '1.3.6.1.2.1.1.4.0',
  sysName: '1.3.6.1.2.1.1.5.0',
  sysLocation: '1.3.6.1.2.1.1.6.0',
} as const;

const IF_DESCR = '1.3.6.1.2.1.2.2.1.2';
const IF_SPEED = '1.3.6.1.2.1.2.2.1.5';
const IF_ADMIN = '1.3.6.1.2.1.2.2.1.7';
const IF_OPER = '1.3.6.1.2.1.2.2.1.8';
const IF_NAME = '1.3.6.1.2.1.31.1.1.1.1';
const IF_HIGH_SPEED = '1.3.6.1.2.1.31.1.1.1.15';

const ADMIN = ['unknown', 'up', 'down', 'testing'] as const;
const OPER = ['unknown', 'up', 'down', 'testing', 'unknown', 'dormant', 'notPresent', 'lowerLayerDown'] as const;

function toText(value: unknown): string | undefined {
  if (Buffer.isBuffer(value)) return value.toString('utf8').replace(/\0+$/, '');
  if (typeof value === 'string') return value;
  return undefined;
}

function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'bigint') return Number(value);
  return undefined;
}

export class SnmpDriver implements DeviceDriver {
  readonly protocol = 'snmp' as const;
  readonly capabilities: DriverCapabilities = {
    inventory: true,
    firmwareInventory: false,
    powerState: false,
    healthAndSensors: false,
    firmwareUpdate: false,
    powerControl: false,
  };

  constructor(private readonly options: SnmpDriverOptions) {}

  private mapError(error: Error): DriverError {
    if (error.name === 'RequestTimedOutError') {
      return new DriverError('DRIVER_TIMEOUT', `SNMP agent ${this.options.host} did not answer`, { deadlineMs: this.options.timeoutMs ?? 2000 });
    }
    return new DriverError('DRIVER_PROTOCOL', `SNMP request failed: ${error.message}`, { cause: `${error.name}: ${error.message}` });
  }

  private get(session: Session, oids: string[]): Promise<Varbind[]> {
    return new Promise((resolve, reject) => session.get(oids, (error, varbinds) => (error ? reject(this.mapError(error)) : resolve(varbinds))));
  }

  private session(): Session {
    const session = snmp.createSession(this.options.host, this.options.community, {
      port: this.options.port ?? 161,
      version: snmp.Version2c,
      timeout: this.options.timeoutMs ?? 2000,
      retries: this.options.retries ?? 1,
    });
    session.on('error', () => undefined);
    return session;
  }

  /** Runs `work` on a fresh session, failing with `DRIVER_TIMEOUT` when the deadline passes first; always closes it. */
  private async withSession<T>(work: (session: Session) => Promise<T>): Promise<T> {
    const { deadline } = this.options;
    const expired = (): DriverError => new DriverError('DRIVER_TIMEOUT', `SNMP agent ${this.options.host} did not finish within the visit's deadline`, {});
    if (deadline?.aborted) throw expired();
    const session = this.session();
    let onAbort: (() => void) | undefined;
    try {
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(expired());
        deadline?.addEventListener('abort', onAbort, { once: true });
      });
      aborted.catch(() => undefined);
      return await Promise.race([work(session), aborted]);
    } catch (error) {
      throw error instanceof DriverError ? error : this.mapError(error instanceof Error ? error : new Error(String(error)));
    } finally {
      if (onAbort) deadline?.removeEventListener('abort', onAbort);
      session.close();
    }
  }

  /**
   * The light liveness check: one GET of `sysUpTime.0` (one request, one small answer). Resolves with the agent's
   * uptime in seconds; a silent agent (or a wrong community, which agents do not answer) is `DRIVER_TIMEOUT`.
   */
  ping(): Promise<number> {
    return this.withSession(async (session) => {
      const [varbind] = await this.get(session, [SYSTEM.sysUpTime]);
      const ticks = varbind && !snmp.isVarbindError(varbind) ? toNumber(varbind.value) : undefined;
      if (ticks === undefined) throw new DriverError('DRIVER_PROTOCOL', `SNMP agent ${this.options.host} answered sysUpTime.0 with no time ticks`, { cause: `value ${String(varbind?.value)}` });
      return ticks / 100;
    });
  }

  /** Every varbind under `oid`, keyed by the index after it. Missing subtrees give an empty map. */
  private column(session: Session, oid: string): Promise<Map<string, Varbind>> {
    const rows = new Map<string, Varbind>();
    return new Promise((resolve, reject) =>
      session.subtree(
        oid,
        20,
        (varbinds) => {
          for (const varbind of varbinds) {
            if (!snmp.isVarbindError(varbind) && varbind.oid.startsWith(`${oid}.`)) rows.set(varbind.oid.slice(oid.length + 1), varbind);
          }
        },
        (error) => (error ? reject(this.mapError(error)) : resolve(rows)),
      ),
    );
  }

  observe(): Promise<DriverObservation[]> {
    const started = performance.now();
    return this.withSession(async (session): Promise<DriverObservation[]> => {
      const unrecognized: UnrecognizedValue[] = [];
      const varbinds = await this.get(session, Object.values(SYSTEM));
      const data: NetworkDeviceObservedData = { source: 'snmp', dialect: 'generic-snmp', unrecognized, interfaces: [], outlets: [] };
      (Object.keys(SYSTEM) as Array<keyof typeof SYSTEM>).forEach((key, index) => {
        const varbind = varbinds[index];
        if (!varbind || snmp.isVarbindError(varbind)) return;
        if (key === 'sysUpTime') {
          const ticks = toNumber(varbind.value);
          if (ticks !== undefined) data.uptimeSeconds = ticks / 100;
          else unrecognized.push({ path: SYSTEM[key], value: String(varbind.value) });
          return;
        }
        const text = toText(varbind.value);
        if (text === undefined) unrecognized.push({ path: SYSTEM[key], value: String(varbind.value) });
        else {
          // A name, contact or location left as the agent's placeholder (`Unknown`, blank) is absent (`presentText`).
          const present = key === 'sysObjectId' ? text.trim() || undefined : presentText(text);
          if (present !== undefined) data[key] = present;
        }
      });
      const dialect = snmpDialects.find((candidate) => candidate.sysObjectIdPrefix && data.sysObjectId?.startsWith(candidate.sysObjectIdPrefix)) ?? snmpDialects[snmpDialects.length - 1]!;
      data.dialect = dialect.id;

      // Columns one after another: small agents (PDU management cards) answer one request at a time.
      const descr = await this.column(session, IF_DESCR);
      const names = await this.column(session, IF_NAME);
      const admin = await this.column(session, IF_ADMIN);
      const oper = await this.column(session, IF_OPER);
      const speed = await this.column(session, IF_SPEED);
      const highSpeed = await this.column(session, IF_HIGH_SPEED);
      for (const [index, varbind] of descr) {
        const adminValue = toNumber(admin.get(index)?.value);
        const operValue = toNumber(oper.get(index)?.value);
        const entry: NetworkDeviceObservedData['interfaces'][number] = {
          index: Number(index),
          name: toText(names.get(index)?.value) || toText(varbind.value) || `if${index}`,
          adminStatus: ADMIN[adminValue ?? 0] ?? 'unknown',
          operStatus: OPER[operValue ?? 0] ?? 'unknown',
        };
        if (adminValue !== undefined && ADMIN[adminValue] === undefined) unrecognized.push({ path: `${IF_ADMIN}.${index}`, value: adminValue });
        if (operValue !== undefined && OPER[operValue] === undefined) unrecognized.push({ path: `${IF_OPER}.${index}`, value: operValue });
        const mbps = toNumber(highSpeed.get(index)?.value) ?? (toNumber(speed.get(index)?.value) ?? 0) / 1_000_000;
        if (mbps > 0) entry.speedMbps = mbps;
        if (Number.isInteger(entry.index)) data.interfaces.push(entry);
      }
      if (dialect.outlets) {
        const outletNames = await this.column(session, dialect.outlets.nameColumn);
        const states = await this.column(session, dialect.outlets.stateColumn);
        for (const [index, varbind] of states) {
          const value = toNumber(varbind.value);
          const state = value === dialect.outlets.on ? 'on' : value === dialect.outlets.off ? 'off' : 'unknown';
          if (state === 'unknown') unrecognized.push({ path: `${dialect.outlets.stateColumn}.${index}`, value: value ?? String(varbind.value) });
          const name = toText(outletNames.get(index)?.value);
          data.outlets.push({ index: Number(index), state, ...(name ? { name } : {}) });
        }
      }
      data.latencyMs = Math.round(performance.now() - started);
      return [{ type: 'NetworkDeviceObserved', data }];
    });
  }

  async close(): Promise<void> {
    // Sessions are per observe(); nothing is held.
  }
}
