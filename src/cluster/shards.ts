import { shardOf, type ShardConfig } from '../poller/index.js';

export { shardOf, type ShardConfig };

/** The site a shard belongs to. */
export function siteOfShard(shard: string): string {
  const at = shard.lastIndexOf('@');
  return at > 0 && /^\d+of\d+$/.test(shard.slice(at + 1)) ? shard.slice(0, at) : shard;
}

/** Parses `site-a=4,site-b=2` (the `--site-shards` option); names what is wrong. */
export function parseShardsPerSite(text: string): Record<string, number> {
  const result: Record<string, number> = {};
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const match = /^([^=\s]+)=(\d+)$/.exec(part);
    if (!match || Number(match[2]) < 1 || Number(match[2]) > 1024) throw new Error(`'${part}' is not <site>=<shards> with shards from 1 to 1024`);
    result[match[1]!] = Number(match[2]);
  }
  return result;
}

export interface MemberView {
  processId: string;
  /** Shards or sites this member polls, and only these; null: any shard not pinned by another member. */
  pinned: readonly string[] | null;
}

export interface LeaseView {
  shard: string;
  owner: string | null;
  /** False when the lease was released or has expired. */
  live: boolean;
}

function pins(member: MemberView, shard: string): boolean {
  return member.pinned !== null && member.pinned.some((p) => p === shard || p === siteOfShard(shard));
}

/**
 * Who should poll each shard, given the live members: a shard pinned by live members goes to the first of them (by
 * id); the others are spread evenly over the live members without pins, keeping a shard with its current live owner
 * while that owner holds no more than its share (so a process joining or leaving moves few shards). A shard nobody may
 * take (every live member is pinned elsewhere) is absent. Pure: every process computes the same answer from the same
 * rows.
 */
export function assignShards(shards: readonly string[], members: readonly MemberView[], leases: readonly LeaseView[]): Map<string, string> {
  const assignment = new Map<string, string>();
  const sortedMembers = [...members].sort((a, b) => (a.processId < b.processId ? -1 : a.processId > b.processId ? 1 : 0));
  const free = sortedMembers.filter((m) => m.pinned === null);
  const rest: string[] = [];
  for (const shard of [...new Set(shards)].sort()) {
    const pinner = sortedMembers.find((m) => pins(m, shard));
    if (pinner) assignment.set(shard, pinner.processId);
    else rest.push(shard);
  }
  if (free.length === 0) return assignment;
  const quota = Math.ceil(rest.length / free.length);
  const load = new Map(free.map((m) => [m.processId, 0]));
  const owners = new Map(leases.filter((l) => l.live && l.owner !== null).map((l) => [l.shard, l.owner!]));
  const unplaced: string[] = [];
  for (const shard of rest) {
    const owner = owners.get(shard);
    if (owner !== undefined && load.has(owner) && load.get(owner)! < quota) {
      assignment.set(shard, owner);
      load.set(owner, load.get(owner)! + 1);
    } else {
      unplaced.push(shard);
    }
  }
  for (const shard of unplaced) {
    let best = free[0]!.processId;
    for (const m of free) if (load.get(m.processId)! < load.get(best)!) best = m.processId;
    assignment.set(shard, best);
    load.set(best, load.get(best)! + 1);
  }
  return assignment;
}
