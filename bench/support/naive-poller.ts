/**
 * The baseline the per-target scheduler is measured against: what a first pilot poller does. Every
 * interval, for every node, every resource is fetched in parallel, each with a fresh Redfish session
 * that is never logged out, and a failure is retried at once, up to three times.
 */
import { request } from 'undici';

const resources = ['/redfish/v1/Systems', '/redfish/v1/Managers', '/redfish/v1/Chassis', '/redfish/v1/UpdateService/FirmwareInventory', '/redfish/v1/SessionService'];

export interface NaiveTarget {
  nodeId: string;
  baseUrl: string;
  username: string;
  password: string;
}

export class NaivePoller {
  #timer: NodeJS.Timeout | null = null;
  #pending = new Set<Promise<void>>();
  requests = 0;
  failures = 0;

  constructor(
    private readonly targets: readonly NaiveTarget[],
    private readonly intervalS: number,
    private readonly onOutcome: (nodeId: string, ok: boolean, at: number) => void,
  ) {}

  start(): void {
    const sweep = (): void => {
      for (const target of this.targets) {
        const visit = this.#visit(target);
        this.#pending.add(visit);
        void visit.finally(() => this.#pending.delete(visit));
      }
    };
    sweep();
    this.#timer = setInterval(sweep, this.intervalS * 1000);
  }

  async #fetch(target: NaiveTarget, path: string): Promise<boolean> {
    for (let attempt = 0; attempt < 4; attempt += 1) {
      this.requests += 2;
      try {
        const login = await request(`${target.baseUrl}/redfish/v1/SessionService/Sessions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ UserName: target.username, Password: target.password }),
          headersTimeout: 10_000,
          bodyTimeout: 10_000,
        });
        await login.body.dump();
        const token = login.headers['x-auth-token'];
        if (login.statusCode >= 300 || typeof token !== 'string') continue;
        const answer = await request(`${target.baseUrl}${path}`, { headers: { 'x-auth-token': token }, headersTimeout: 10_000, bodyTimeout: 10_000 });
        await answer.body.dump();
        if (answer.statusCode < 300) return true;
      } catch {
        // retried at once
      }
    }
    return false;
  }

  async #visit(target: NaiveTarget): Promise<void> {
    const results = await Promise.all(resources.map((path) => this.#fetch(target, path)));
    const ok = results.some(Boolean);
    if (!ok) this.failures += 1;
    this.onOutcome(target.nodeId, ok, Date.now());
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await Promise.race([Promise.all([...this.#pending]), new Promise((resolve) => setTimeout(resolve, 15_000))]);
  }
}
