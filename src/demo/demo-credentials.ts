/**
 * The demo's credential store and the versions in force: `start` keeps the simulated BMCs' credentials in the data
 * folder (`bmc-credentials.json`, mode 0600, one reference `sim:<id>` per BMC, bound to its address) with the versions
 * rotations stage beside it, and follows the log for the version in force on each node, so the poller, rollouts and
 * rotations all log in with what the ledger says the BMC holds (the simulator's own view of its passwords is never
 * read once the file exists).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyCredentialEvent, credentialInForceTypes, FileCredentialStore, loginCredentialOf, writeOperatorCredentials, type NodeCredential, type StoredCredential, type VersionedCredentialStore } from '../credentials/index.js';
import type { EventStore } from '../ledger/index.js';
import type { SimBmcInfo } from '../sim/index.js';
import { simulatedCredentialPrefix } from './recorded-fleet.js';

/** Not `credentials.json`: the embedded PostgreSQL keeps its own database credentials under that name in the same folder. */
export const demoCredentialsFileName = 'bmc-credentials.json';

/**
 * The demo's store: the file is written once with each simulated BMC's password as it was first served, and a BMC the
 * file does not name yet (a larger fleet) is added; an entry already there is never rewritten (a rotated BMC's
 * password is a version staged beside it, in force by the ledger).
 */
export function demoCredentialStore(dataDir: string, bmcs: readonly SimBmcInfo[]): FileCredentialStore {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, demoCredentialsFileName);
  const table: Record<string, { username: string; password: string; endpoints: string[] }> = existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Record<string, { username: string; password: string; endpoints: string[] }>) : {};
  let added = 0;
  for (const bmc of bmcs) {
    const ref = `${simulatedCredentialPrefix}${bmc.id}`;
    const origin = new URL(bmc.baseUrl).origin;
    const entry = table[ref];
    if (entry && entry.endpoints.includes(origin)) continue;
    // New, or served at another address now (a simulator on another port): bound to where it is served.
    table[ref] = entry ? { ...entry, endpoints: [origin] } : { username: bmc.username, password: bmc.password, endpoints: [origin] };
    added++;
  }
  if (added > 0 || !existsSync(path)) writeOperatorCredentials(path, table);
  return new FileCredentialStore(path);
}

/** The version in force on each node and its fence, kept in step with the log (from `fromPosition`) until `signal` aborts. */
export function followCredentialsInForce(store: EventStore, signal: AbortSignal): { nodes: Map<string, NodeCredential>; following: Promise<void> } {
  const nodes = new Map<string, NodeCredential>();
  const following = store.follow({ fromPosition: 1, types: [...credentialInForceTypes] }, (batch) => {
    for (const event of batch.events) applyCredentialEvent(nodes, event);
  }, signal);
  return { nodes, following };
}

/** The credential to reach a node's BMC with now (the version in force), or undefined while a rotation fences it. */
export function credentialInForce(credentials: VersionedCredentialStore, nodes: ReadonlyMap<string, NodeCredential>, nodeId: string, registeredRef: string): StoredCredential | undefined {
  const login = loginCredentialOf(nodes.get(nodeId), registeredRef);
  if (login.kind === 'fenced') return undefined;
  return login.version === undefined ? credentials.get(login.credentialRef) : credentials.getVersion(login.credentialRef, login.version);
}
