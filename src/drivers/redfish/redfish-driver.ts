/**
 * The Redfish `DeviceDriver`: reads a BMC into normalized observations through one session.
 *
 * Session discipline, because a leaked session is what exhausts an iDRAC (5 to 8 sessions, then 503 RAC0218):
 * every `observe()` logs out in a `finally` unless the driver was built with `reuseSession`, in which case the one
 * session is kept for the next `observe()` and `close()` logs it out. No path through `observe()` leaves a session
 * open that the driver does not still hold.
 */
import type { DriverObservation } from '../../../events/index.js';
import type { DeviceDriver, DriverCapabilities, ObserveOptions, PowerAction } from '../device-driver.js';
import { DriverError, toDriverError } from '../driver-error.js';
import { RedfishClient, type RedfishClientOptions } from './redfish-client.js';
import { readRedfishNode, type ReadNodeOptions } from './read-node.js';
import type { RedfishDialect } from './dialect.js';
import { asResource, isExpandQuery } from './resource-reader.js';
import {
  activateFirmware,
  findUpdateTask,
  readFirmwareVersion,
  readUpdateTask,
  submitFirmwareUpdate,
  type FirmwareSubmission,
  type FirmwareUpdateRequest,
  type UpdateTaskReading,
} from './firmware-update.js';

export interface RedfishDriverOptions extends RedfishClientOptions, ReadNodeOptions {
  /** Keep the session between `observe()` calls (poller mode); `close()` ends it. Default false. */
  reuseSession?: boolean;
}

/** Every resource a read fetched, with the ETag the BMC sent for it: what a later read asks with `If-None-Match`. */
export type ReadValidators = ReadonlyArray<readonly [path: string, etag: string]>;

/** Most resources a read may have fetched for its validators to be kept (beyond that, every visit reads in full). */
export const maxReadValidators = 400;

export type ConditionalObservation =
  | { notModified: true; requests: number }
  /** `changed`: the resource whose answer ended the check (asked first next time: one that changes at every read, a
   *  clock in a Manager resource say, then costs one request, not all those before it). */
  | { notModified: false; observations: DriverObservation[]; validators: ReadValidators | undefined; changed?: string };

export class RedfishDriver implements DeviceDriver {
  readonly protocol = 'redfish' as const;
  readonly capabilities: DriverCapabilities = {
    inventory: true,
    firmwareInventory: true,
    powerState: true,
    healthAndSensors: true,
    firmwareUpdate: true,
    powerControl: true,
  };
  private readonly client: RedfishClient;
  private lastDialect: RedfishDialect | undefined;

  constructor(private readonly options: RedfishDriverOptions) {
    this.client = new RedfishClient(options);
  }

  /** The dialect record the last successful read used (for fleet reports). */
  get dialect(): RedfishDialect | undefined {
    return this.lastDialect;
  }

  /** Sessions opened and closed by this driver so far. */
  get sessionCounts(): { opened: number; closed: number; held: boolean } {
    return { opened: this.client.sessionsOpened, closed: this.client.sessionsClosed, held: this.client.hasSession };
  }

  /** Where the last session was opened (the root's advertised path or the standard one), if a session was. */
  get sessionPath(): string | undefined {
    return this.client.authenticationUsed === 'session' ? this.client.sessionPath : undefined;
  }

  get authentication(): 'session' | 'basic' | 'none' {
    return this.client.authenticationUsed;
  }

  private async withSession<T>(work: () => Promise<T>): Promise<T> {
    try {
      if (this.options.authMode === 'basic' || this.options.authMode === 'none') {
        await this.client.login(); // no session to find: skip reading the service root for its Sessions link
      } else {
        const root = asResource((await this.client.get('/redfish/v1')).body);
        const sessionsLink = asResource(asResource(root?.Links)?.Sessions)?.['@odata.id'];
        await this.client.login(typeof sessionsLink === 'string' ? sessionsLink : undefined);
      }
      return await work();
    } catch (error) {
      throw toDriverError(error);
    } finally {
      if (!this.options.reuseSession) await this.client.logout();
    }
  }

  async observe(options: ObserveOptions = {}): Promise<DriverObservation[]> {
    return this.withSession(async () => (await this.#read(options, async (path) => (await this.client.get(path)).body)).observations);
  }

  /**
   * `observe`, made conditional: with the `validators` of an earlier read (every resource it fetched, with the ETag
   * the BMC sent), each is first asked with `If-None-Match`, and when every one answers 304 nothing has changed and
   * nothing more is read. The first that answers anything else (changed, gone, no ETag support) ends the check and the
   * read is done in full. Meant for what changes only with the hardware or its firmware (inventory, firmware): a read
   * with sensors or event logs in it changes at every visit. A full read returns its own validators when every
   * resource it fetched came with an ETag and there are at most `maxReadValidators` of them; otherwise none.
   */
  async observeUnlessUnchanged(options: ObserveOptions & { validators?: ReadValidators | undefined }): Promise<ConditionalObservation> {
    return this.withSession(async () => {
      let changed: string | undefined;
      if (options.validators && options.validators.length > 0) {
        let asked = 0;
        for (const [path, etag] of options.validators) {
          asked += 1;
          const answer = await this.client.get(path, { ifNoneMatch: etag }).catch(() => undefined);
          if (answer?.status !== 304) {
            changed = path;
            break;
          }
          if (asked === options.validators.length) return { notModified: true, requests: asked };
        }
      }
      const fetched = new Map<string, string>();
      let complete = true;
      const { observations } = await this.#read(options, async (path) => {
        try {
          const answer = await this.client.get(path);
          if (answer.etag) fetched.set(path, answer.etag);
          else complete = false;
          return answer.body;
        } catch (error) {
          // A resource it could not read: a later check could not tell whether it came back. A refused `$expand` is
          // not one: the plain request that follows it is (`ResourceReader.expandWith`).
          if (!isExpandQuery(path)) complete = false;
          throw error;
        }
      });
      const validators = complete && fetched.size > 0 && fetched.size <= maxReadValidators ? [...fetched] : undefined;
      return { notModified: false, observations, validators, ...(changed ? { changed } : {}) };
    });
  }

  async #read(options: ObserveOptions, fetch: (path: string) => Promise<unknown>): Promise<{ observations: DriverObservation[] }> {
    const wants = (type: DriverObservation['type']): boolean => !options.only || options.only.includes(type);
    // The event logs cost requests (an iDRAC lists its SEL in 18 s), the sensors up to `maxSensors` resources: each
    // read only when asked for, or when all is.
    const reading = await readRedfishNode(fetch, { ...this.options, readSel: this.options.readSel !== false && wants('SelEntriesObserved'), readSensors: this.options.readSensors !== false && wants('SensorsObserved') });
    this.lastDialect = reading.dialect;
    return { observations: options.only ? reading.observations.filter((observation) => options.only!.includes(observation.type)) : reading.observations };
  }

  /** Resets the primary system through `#ComputerSystem.Reset`. */
  async setPower(action: PowerAction): Promise<void> {
    await this.withSession(async () => {
      const systems = asResource((await this.client.get('/redfish/v1/Systems')).body);
      const first = Array.isArray(systems?.Members) ? asResource(systems.Members[0])?.['@odata.id'] : undefined;
      if (typeof first !== 'string') throw new DriverError('DRIVER_PROTOCOL', 'no system to reset');
      const system = asResource((await this.client.get(first)).body);
      const target = asResource(asResource(system?.Actions)?.['#ComputerSystem.Reset'])?.target;
      if (typeof target !== 'string') throw new DriverError('DRIVER_UNSUPPORTED', `${first} has no #ComputerSystem.Reset action`);
      await this.client.post(target, { ResetType: action });
    });
  }

  /** Submits a firmware update (SimpleUpdate or multipart push); see `firmware-update.ts` for the outcomes. */
  async submitFirmwareUpdate(update: FirmwareUpdateRequest): Promise<FirmwareSubmission> {
    return this.withSession(() => submitFirmwareUpdate(this.client, update));
  }

  async readUpdateTask(taskMonitor: string): Promise<UpdateTaskReading | 'vanished'> {
    return this.withSession(() => readUpdateTask(this.client, taskMonitor));
  }

  async findUpdateTask(imageUri: string, since: number): Promise<string | null> {
    return this.withSession(() => findUpdateTask(this.client, imageUri, since));
  }

  async activateFirmware(component: string): Promise<{ resetType: string; target: string }> {
    return this.withSession(() => activateFirmware(this.client, component));
  }

  async readFirmwareVersion(component: string): Promise<string | null> {
    return this.withSession(() => readFirmwareVersion(this.client, component));
  }

  /**
   * A light health check (for burn-in and gates): the `Status` of every system and chassis, a few requests instead
   * of a full read. Each member not OK is a problem, named by its path.
   */
  async readHealthSummary(): Promise<{ problems: string[] }> {
    return this.withSession(async () => {
      const problems: string[] = [];
      for (const collection of ['/redfish/v1/Systems', '/redfish/v1/Chassis']) {
        const list = asResource((await this.client.get(collection)).body);
        const members = Array.isArray(list?.Members) ? list.Members.map((member) => asResource(member)?.['@odata.id']).filter((id): id is string => typeof id === 'string') : [];
        for (const path of members.slice(0, 16)) {
          const status = asResource(asResource((await this.client.get(path)).body)?.Status);
          for (const key of ['Health', 'HealthRollup'] as const) {
            const value = status?.[key];
            if (typeof value === 'string' && value !== 'OK') problems.push(`${path} ${key} ${value}`);
          }
        }
      }
      return { problems };
    });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
