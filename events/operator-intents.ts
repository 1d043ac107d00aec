import { z } from 'zod';
import { defineEvent } from './define-event.js';
import { instantSchema, nodeIdSchema, siteIdSchema } from './common.js';

/**
 * Operator intents: what people ask for. Each is recorded with the principal who asked (the envelope's
 * `actor`), never with a credential: BMC credentials are referred to by name (`credentialRef`) only.
 */

const reason = z.string().min(1).max(500);

export const bmcEndpointSchema = z.object({
  protocol: z.enum(['redfish', 'ipmi', 'snmp']),
  /** Base URL (`https://10.1.2.3`) for Redfish, host[:port] for IPMI and SNMP. */
  address: z.string().min(1).max(300),
  /** Name of the credential in the operator's secret store; the secret itself never enters the log. */
  credentialRef: z.string().min(1).max(200),
  /** Configured concurrent-session limit; the dialect's hint or 2 applies when absent. */
  sessionLimit: z.number().int().min(1).max(64).optional(),
});

export const NodeRegistered = defineEvent({
  family: 'operator-intent',
  type: 'NodeRegistered',
  description: 'A node joins the fleet: where it is and how to reach its BMC.',
  schema: z.object({
    nodeId: nodeIdSchema,
    site: siteIdSchema,
    rack: z.string().min(1).max(64),
    bmc: bmcEndpointSchema,
    expectedIntervalS: z.number().int().min(1).max(86_400).default(60),
  }),
});

export const NodeDecommissioned = defineEvent({
  family: 'operator-intent',
  type: 'NodeDecommissioned',
  description: 'A node leaves the fleet; it is no longer polled and its silence is no longer an alarm.',
  schema: z.object({ nodeId: nodeIdSchema, reason }),
});

export const MaintenanceWindowSet = defineEvent({
  family: 'operator-intent',
  type: 'MaintenanceWindowSet',
  description: 'A node is expected to be silent between two instants; silence then is not darkness.',
  schema: z
    .object({ nodeId: nodeIdSchema, from: instantSchema, until: instantSchema, reason })
    .refine((w) => Date.parse(w.until) > Date.parse(w.from), { path: ['until'], message: 'must be after from' }),
});

export const NodeCordoned = defineEvent({
  family: 'operator-intent',
  type: 'NodeCordoned',
  description: 'No new work (rollouts, provisioning) may be scheduled on the node.',
  schema: z.object({ nodeId: nodeIdSchema, reason }),
});

export const NodeUncordoned = defineEvent({
  family: 'operator-intent',
  type: 'NodeUncordoned',
  description: 'The node may receive new work again.',
  schema: z.object({ nodeId: nodeIdSchema, reason: reason.optional() }),
});

export const NodeQuarantined = defineEvent({
  family: 'operator-intent',
  type: 'NodeQuarantined',
  description: 'The node is suspected faulty and kept out of service until released.',
  schema: z.object({ nodeId: nodeIdSchema, reason }),
});

export const NodeReleased = defineEvent({
  family: 'operator-intent',
  type: 'NodeReleased',
  description: 'The node leaves quarantine.',
  schema: z.object({ nodeId: nodeIdSchema, reason: reason.optional() }),
});

export const LockoutLatchCleared = defineEvent({
  family: 'operator-intent',
  type: 'LockoutLatchCleared',
  description: 'An operator allows logins to a BMC again after an authentication failure latched them off.',
  schema: z.object({ nodeId: nodeIdSchema, reason }),
});

export const AlarmAcknowledged = defineEvent({
  family: 'operator-intent',
  type: 'AlarmAcknowledged',
  description: 'An operator has seen an alarm and takes it on.',
  schema: z.object({ alarmId: z.string().min(1).max(200), note: z.string().max(1000).optional() }),
});

/** What an operator declares a node should be: one row of the engineering bill of materials. */
export const ebomRowSchema = z.object({
  nodeId: nodeIdSchema,
  site: siteIdSchema,
  rack: z.string().min(1).max(64),
  position: z.string().max(32).optional(),
  manufacturer: z.string().min(1).max(200),
  model: z.string().min(1).max(200),
  serial: z.string().min(1).max(200),
  gpuCount: z.number().int().min(0).max(256).optional(),
  gpuModel: z.string().max(200).optional(),
  memoryGiB: z.number().int().min(0).max(1_000_000).optional(),
  /** Baseline firmware per component name (`BMC`, `BIOS`, `CPLD`, a GPU's VBIOS, ...). */
  firmwareBaseline: z.record(z.string().min(1).max(200), z.string().min(1).max(200)).default({}),
  powerFeed: z.string().max(200).optional(),
  networkPort: z.string().max(200).optional(),
});
export type EbomRow = z.infer<typeof ebomRowSchema>;

export const NodeDeclared = defineEvent({
  family: 'operator-intent',
  type: 'NodeDeclared',
  description: 'The EBOM entry for one node: what should be there (stream node-<id>).',
  schema: z.object({ importId: z.string().min(1).max(200), declaration: ebomRowSchema }),
});

export const EbomImported = defineEvent({
  family: 'operator-intent',
  type: 'EbomImported',
  description: 'One EBOM import decision: the file, its row count and digest; its rows follow as NodeDeclared.',
  schema: z.object({
    importId: z.string().min(1).max(200),
    source: z.string().max(500),
    rows: z.number().int().min(1),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
});

export const TopologyDeclared = defineEvent({
  family: 'operator-intent',
  type: 'TopologyDeclared',
  description: 'Which power feed (PDU), top-of-rack switch and coolant unit (CDU) serve a rack (stream rack-<id>).',
  schema: z.object({
    site: siteIdSchema,
    rack: z.string().min(1).max(64),
    pdu: z.array(z.string().min(1).max(64)).default([]),
    tor: z.array(z.string().min(1).max(64)).default([]),
    cdu: z.string().min(1).max(64).optional(),
  }),
});

export const operatorIntentEvents = [
  NodeRegistered,
  NodeDecommissioned,
  MaintenanceWindowSet,
  NodeCordoned,
  NodeUncordoned,
  NodeQuarantined,
  NodeReleased,
  LockoutLatchCleared,
  AlarmAcknowledged,
  NodeDeclared,
  EbomImported,
  TopologyDeclared,
] as const;
