import type { DriverObservation, DriverObservationType } from '../../events/index.js';
import { RedfishClient, RedfishDriver } from '../drivers/index.js';
import type { Credential, PollTarget, PollWork } from './poll-target.js';

/** What one visit to a BMC produced: one result per kind of work, and the observations read. */
export interface VisitResult {
  ok: boolean;
  latencyMs: number;
  observations: DriverObservation[];
  error?: unknown;
}

/** Performs the requests of one visit. The poller guarantees one visit per BMC at a time. */
export interface Visitor {
  visit(target: PollTarget, credential: Credential, works: readonly PollWork[], options: VisitOptions): Promise<VisitResult>;
}

export interface VisitOptions {
  requestTimeoutMs: number;
  firmwareTimeoutMs: number;
  /** Everything a heavy visit does, all requests together (logout excepted): a slow BMC cannot hold a slot for hours. */
  visitDeadlineMs: number;
  sessionLimit: number;
}

const observationTypes: Record<Exclude<PollWork, 'liveness'>, DriverObservationType[]> = {
  health: ['HealthObserved', 'PowerStateObserved', 'SensorsObserved'],
  inventory: ['NodeInventoryObserved'],
  firmware: ['FirmwareInventoryObserved'],
};

/**
 * Visits over Redfish. A liveness-only visit is one authenticated GET with basic auth: no session is
 * created, so none can leak, and the BMC's session table is left to its operators. A visit with heavier
 * work opens at most one session, reads what is due through it, and always logs out.
 */
export class RedfishVisitor implements Visitor {
  async visit(target: PollTarget, credential: Credential, works: readonly PollWork[], options: VisitOptions): Promise<VisitResult> {
    const started = performance.now();
    const heavy = works.filter((w): w is Exclude<PollWork, 'liveness'> => w !== 'liveness');
    if (heavy.length === 0) {
      const client = new RedfishClient({
        baseUrl: target.baseUrl,
        username: credential.username,
        password: credential.password,
        authMode: 'basic',
        maxConcurrency: 1,
        requestTimeoutMs: options.requestTimeoutMs,
      });
      try {
        await client.login(); // basic auth: sets the header, opens no session
        await client.get('/redfish/v1/Systems');
        return { ok: true, latencyMs: performance.now() - started, observations: [] };
      } catch (error) {
        return { ok: false, latencyMs: performance.now() - started, observations: [], error };
      } finally {
        await client.close();
      }
    }
    const driver = new RedfishDriver({
      baseUrl: target.baseUrl,
      username: credential.username,
      password: credential.password,
      authMode: 'auto',
      reuseSession: false,
      maxConcurrency: Math.max(1, Math.min(2, options.sessionLimit)),
      // Every heavy read walks the firmware inventory (the BMC and BIOS versions of the inventory come from it on
      // some models), and that collection can take minutes to answer (Supermicro X13, GB200, GH200): with the
      // short deadline an inventory read of those models never completed.
      requestTimeoutMs: Math.max(options.requestTimeoutMs, options.firmwareTimeoutMs),
      deadline: AbortSignal.timeout(options.visitDeadlineMs),
    });
    try {
      const observations = await driver.observe({ only: heavy.flatMap((w) => observationTypes[w]) });
      return { ok: true, latencyMs: performance.now() - started, observations };
    } catch (error) {
      return { ok: false, latencyMs: performance.now() - started, observations: [], error };
    } finally {
      await driver.close();
    }
  }
}
