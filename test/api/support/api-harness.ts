/** An API over a fresh ledger database (embedded PostgreSQL), with projections running and one token per role. */
import { inject } from 'vitest';
import { fleetProjections } from '../../../projections/index.js';
import { buildApi, TokenTable, type Role, type ZodApp } from '../../../src/api/index.js';
import { EventStore, ProjectionRunner } from '../../../src/ledger/index.js';
import { freshDatabase } from '../../support/backends.js';

export const tokens: Record<Role, string> = {
  operator: 'test-operator-token-0001',
  analyst: 'test-analyst-token-00001',
  auditor: 'test-auditor-token-00001',
  admin: 'test-admin-token-0000001',
  agent: 'test-agent-token-0000001',
};

export const principals: Record<Role, string> = { operator: 'alice', analyst: 'bob', auditor: 'carol', admin: 'root', agent: 'gpu-agent' };

/** The agent speaks for the test fleet's nodes (`dc1-*`) only. */
export const tokenTable = new TokenTable((Object.keys(tokens) as Role[]).map((role) => ({ token: tokens[role], principal: principals[role], role, ...(role === 'agent' ? { nodes: ['dc1-*'] } : {}) })));

export function bearer(role: Role): Record<string, string> {
  return { authorization: `Bearer ${tokens[role]}` };
}

export interface ApiHarness {
  app: ZodApp;
  store: EventStore;
  runner: ProjectionRunner;
  /** Resolves once every projection has applied the log up to the current head. */
  caughtUp(): Promise<void>;
  head(): Promise<number>;
  close(): Promise<void>;
}

export async function openApiHarness(options: { maxLiveFeeds?: number; maxPageBytes?: number; readDatabaseUrl?: string } = {}): Promise<ApiHarness> {
  const database = await freshDatabase(inject('embeddedAdminUrl'));
  const store = await EventStore.open({ connectionString: database.url, pollIntervalMs: 200 });
  const runner = new ProjectionRunner(store, fleetProjections({ liveness: { darkAfterMisses: 3 } }));
  await runner.start();
  const app = await buildApi({ store, runner, tokens: tokenTable, ...options });
  await app.ready();
  return {
    app,
    store,
    runner,
    async caughtUp() {
      const target = (await store.head()).position;
      for (let attempt = 0; attempt < 200; attempt += 1) {
        const statuses = await runner.status();
        if (statuses.every((s) => s.position >= target && s.state === 'running')) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`projections did not reach position ${target}: ${JSON.stringify(await runner.status())}`);
    },
    async head() {
      return (await store.head()).position;
    },
    async close() {
      await app.close();
      await runner.stop();
      await store.close();
      await database.drop();
    },
  };
}

/** A NodeRegistered body for the API. */
export function registration(nodeId: string, rack = 'r01', site = 'dc1') {
  return { nodeId, site, rack, bmc: { protocol: 'redfish', address: `https://${nodeId}.bmc`, credentialRef: `cred-${nodeId}` }, expectedIntervalS: 60 };
}
