import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';
import { isEventOf, nodeIdSchema, siteIdSchema } from '../../events/index.js';
import type { EventStore } from '../ledger/index.js';
import { FileCredentialStore } from '../credentials/index.js';
import { protocolOfAddress } from '../poller/index.js';

export { CredentialFileError } from '../credentials/index.js';

/** A file of real BMCs to poll: what an operator writes before `start --no-sim --targets FILE`. */
export const targetFileSchema = z.object({
  targets: z
    .array(
      z.object({
        nodeId: nodeIdSchema,
        site: siteIdSchema,
        rack: z.string().min(1).max(64),
        /**
         * Redfish base URL, `https://10.1.2.3`; `ipmi://10.1.2.3[:623]` for a BMC without Redfish (RMCP+);
         * `snmp://10.1.2.3[:161]` for a PDU (SNMP v2c, its credential's password the community).
         */
        bmc: z.string().url().refine((url) => /^(https?|ipmi|snmp):\/\//i.test(url), { message: 'must be an https://, http://, ipmi:// or snmp:// address' }),
        credentialRef: z.string().min(1),
        sessionLimit: z.number().int().min(1).max(64).optional(),
        intervalS: z.number().int().min(1).max(86_400).default(60),
      }),
    )
    .min(1),
});

export type TargetFile = z.infer<typeof targetFileSchema>;

export function loadTargetFile(path: string): TargetFile {
  const parsed = targetFileSchema.safeParse(parse(readFileSync(path, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${path}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  return parsed.data;
}

/** Registers each target as an operator intent, unless it is registered already at the same address. */
export async function registerTargets(store: EventStore, file: TargetFile, operatorId: string): Promise<number> {
  let registered = 0;
  // Many at once (the ledger commits concurrent appends together): a file of thousands registers in seconds.
  const chunk = 256;
  const targets = [...new Map(file.targets.map((target) => [target.nodeId, target])).values()]; // a node listed twice: its last entry
  for (let from = 0; from < targets.length; from += chunk) {
    await Promise.all(
      targets.slice(from, from + chunk).map(async (target) => {
        const stream = `node-${target.nodeId}`;
        const last = (await store.readStream(stream, { direction: 'backward', limit: 50 })).find((e) => isEventOf(e, 'NodeRegistered'));
        if (last && isEventOf(last, 'NodeRegistered') && last.data.bmc.address === target.bmc) return;
        await store.append(stream, [
          {
            type: 'NodeRegistered',
            data: {
              nodeId: target.nodeId,
              site: target.site,
              rack: target.rack,
              bmc: { protocol: protocolOfAddress(target.bmc), address: target.bmc, credentialRef: target.credentialRef, sessionLimit: target.sessionLimit },
              expectedIntervalS: target.intervalS,
            },
            actor: { kind: 'operator', id: operatorId },
          },
        ]);
        registered += 1;
      }),
    );
  }
  return registered;
}

/**
 * Credentials from a JSON file (`{ "<credentialRef>": { "username", "password", "endpoints": ["10.20.0.0/16"] } }`)
 * that only its owner may read, with the versions rotations staged beside it (`src/credentials`). Re-read when it
 * changes. The operator's entry's version is a digest of its own secret, so rotating one password by hand lifts the
 * lockout latches of that credential only (an edit elsewhere in the file lifts none). A file caught half-written or
 * invalid on a re-read is ignored: the last good one stays in force, so no node drops out of the schedule. The first
 * read must be good: it throws a `CredentialFileError` naming the field.
 */
export function fileCredentials(path: string): FileCredentialStore {
  return new FileCredentialStore(path, { recheckMs: 0 });
}
