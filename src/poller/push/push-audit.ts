/**
 * The audit's reads, in the session of the visit: the SSE subscriptions the BMC lists (with the heartbeat they
 * announce), and the state its System reports (health, power).
 */
import { listSubscriptions, readSubscription, type RedfishClient } from '../../drivers/index.js';
import type { AuditReading, PushNode } from './push-node.js';

const STANDARD_SUBSCRIPTIONS = '/redfish/v1/EventService/Subscriptions';

export async function auditBmc(client: RedfishClient, node: PushNode): Promise<AuditReading> {
  const subscriptions = await subscriptionsOf(client, node);
  const system = node.systemPath ? recordOf((await client.get(node.systemPath)).body) : {};
  const status = recordOf(system.Status);
  return {
    listedSse: subscriptions.listedSse,
    heartbeatMs: subscriptions.heartbeatMs,
    health: typeof status.Health === 'string' ? status.Health : undefined,
    powerState: typeof system.PowerState === 'string' ? system.PowerState : undefined,
  };
}

/**
 * The SSE subscriptions listed, and the heartbeat announced. Each member is read only when the collection's members
 * changed since the last audit (a steady audit costs two requests: the collection and the System).
 */
async function subscriptionsOf(client: RedfishClient, node: PushNode): Promise<NonNullable<PushNode['subscriptions']>> {
  const members = await listSubscriptions(client, node.subscriptionsPath ?? STANDARD_SUBSCRIPTIONS);
  const key = members.join('\n');
  if (node.subscriptions?.key === key) return node.subscriptions;
  let listedSse = 0;
  let heartbeatMs: number | undefined;
  for (const path of members) {
    const subscription = await readSubscription(client, path);
    if (!subscription.sse) continue;
    listedSse += 1;
    heartbeatMs ??= subscription.heartbeatMs;
  }
  node.subscriptions = { key, listedSse, heartbeatMs };
  return node.subscriptions;
}

/** The first System the BMC lists, or undefined. */
export async function firstSystemPath(client: RedfishClient): Promise<string | undefined> {
  const members = recordOf((await client.get('/redfish/v1/Systems')).body).Members;
  const first = Array.isArray(members) ? recordOf(members[0])['@odata.id'] : undefined;
  return typeof first === 'string' ? first : undefined;
}

function recordOf(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {};
}
