/**
 * The audit's reads, in the session of the visit: the SSE subscriptions the BMC lists (with the heartbeat they
 * announce), and the state its System reports (health, power).
 */
import { readSseSubscriptions, type RedfishClient } from '../../drivers/index.js';
import type { AuditReading } from './push-node.js';

const STANDARD_SUBSCRIPTIONS = '/redfish/v1/EventService/Subscriptions';

export async function auditBmc(client: RedfishClient, subscriptionsPath: string | undefined, systemPath: string | undefined): Promise<AuditReading> {
  const listed = await readSseSubscriptions(client, subscriptionsPath ?? STANDARD_SUBSCRIPTIONS);
  const system = systemPath ? recordOf((await client.get(systemPath)).body) : {};
  const status = recordOf(system.Status);
  return {
    listedSse: listed.length,
    heartbeatMs: listed.find((subscription) => subscription.heartbeatMs !== undefined)?.heartbeatMs,
    health: typeof status.Health === 'string' ? status.Health : undefined,
    powerState: typeof system.PowerState === 'string' ? system.PowerState : undefined,
  };
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
