import { readFileSync, statSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';
import { nodeIdSchema, siteIdSchema } from '../../events/index.js';
import type { EventStore } from '../ledger/index.js';
import type { CredentialProvider } from '../poller/index.js';

/** A file of real BMCs to poll: what an operator writes before `start --no-sim --targets FILE`. */
export const targetFileSchema = z.object({
  targets: z
    .array(
      z.object({
        nodeId: nodeIdSchema,
        site: siteIdSchema,
        rack: z.string().min(1).max(64),
        /** Redfish base URL, `https://10.1.2.3`. */
        bmc: z.string().url(),
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
  for (const target of file.targets) {
    const stream = `node-${target.nodeId}`;
    const last = (await store.readStream(stream, { direction: 'backward', limit: 50 })).find((e) => e.type === 'NodeRegistered');
    if (last && (last.data as { bmc: { address: string } }).bmc.address === target.bmc) continue;
    await store.append(stream, [
      {
        type: 'NodeRegistered',
        data: { nodeId: target.nodeId, site: target.site, rack: target.rack, bmc: { protocol: 'redfish', address: target.bmc, credentialRef: target.credentialRef, sessionLimit: target.sessionLimit }, expectedIntervalS: target.intervalS },
        actor: { kind: 'operator', id: operatorId },
      },
    ]);
    registered += 1;
  }
  return registered;
}

/**
 * Credentials from a JSON file (`{ "<credentialRef>": { "username": ..., "password": ... } }`) that only its
 * owner may read. Re-read when it changes, so a rotated password lifts a lockout latch by itself.
 */
export function fileCredentials(path: string): CredentialProvider {
  const mode = statSync(path).mode & 0o077;
  if (mode !== 0) throw new Error(`${path} is readable by others (mode ${(statSync(path).mode & 0o777).toString(8)}); chmod 600 it`);
  let loadedAt = 0;
  let table: Record<string, { username: string; password: string }> = {};
  let version = '';
  return {
    get(ref) {
      const stat = statSync(path);
      if (stat.mtimeMs !== loadedAt) {
        table = JSON.parse(readFileSync(path, 'utf8')) as typeof table;
        loadedAt = stat.mtimeMs;
        version = String(stat.mtimeMs);
      }
      const entry = table[ref];
      return entry ? { username: entry.username, password: entry.password, version } : undefined;
    },
  };
}
