import { createHash } from 'node:crypto';

/**
 * How the fleet is split among poller processes. A shard is a site, or for a large site one of `n` hash ranges of its
 * node ids (`<site>@<k>of<n>`): a node's shard depends only on its site, its id and the configuration, so every process
 * computes the same split without asking anyone.
 */
export interface ShardConfig {
  /** Hash ranges per site (default 1: the site is one shard). */
  shardsPerSite?: Readonly<Record<string, number>>;
}

export function shardOf(site: string, nodeId: string, config: ShardConfig = {}): string {
  const n = Math.max(1, Math.floor(config.shardsPerSite?.[site] ?? 1));
  if (n === 1) return site;
  const k = createHash('sha256').update(nodeId).digest().readUInt32BE(0) % n;
  return `${site}@${k}of${n}`;
}
