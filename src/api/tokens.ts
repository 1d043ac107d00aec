/**
 * Bearer tokens and the roles they carry. A token maps to a principal (who is asking: recorded on every intent)
 * and one role. Tokens are compared by their SHA-256 digest, kept only in memory and never logged.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

export const roles = ['operator', 'analyst', 'auditor', 'admin', 'agent'] as const;
export type Role = (typeof roles)[number];

export interface Principal {
  id: string;
  role: Role;
  /**
   * The nodes an agent token may report for: node-id patterns (`*` matches any run of characters). An agent is a
   * program on one host; its token speaks for that host (or a rack or site of them), never for the whole fleet
   * unless its owner wrote `*`. Absent on other roles.
   */
  nodes?: readonly string[];
  /**
   * A forwarder (the fleet's centre) asks on behalf of the principals it authenticated: each of its requests names
   * who asked (`Fleet-On-Behalf-Of`), and the ledger records that principal with the door it came through (`via`).
   */
  forwards?: boolean;
  /** Set on a principal a forwarder asked for: `centre:<forwarder>` (recorded on its intents as the actor's `via`). */
  via?: string;
}

const nodePattern = z.string().min(1).max(200).regex(/^[A-Za-z0-9*][A-Za-z0-9._:*-]*$/, 'node patterns use letters, digits, . _ : - and * only');

/** Whether `nodeId` is one an agent principal may report for. */
export function agentMayReportFor(principal: Principal, nodeId: string): boolean {
  return (principal.nodes ?? []).some((pattern) => new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.:]/g, '\\$&')).join('.*')}$`).test(nodeId));
}

const principalId = z.string().min(1).max(200).regex(/^[A-Za-z0-9._@:-]+$/, 'principals use letters, digits and . _ @ : - only');
/** What a principal's name may be (a tokens file's, or one a forwarder names). */
export const principalIdSchema = principalId;

/** The JSON tokens file: `{ "tokens": [{ "token": "...", "principal": "alice", "role": "operator" }] }` or a bare array. */
const tokenEntry = z.object({ token: z.string().min(16), principal: principalId, role: z.enum(roles), nodes: z.array(nodePattern).min(1).optional(), forwards: z.boolean().optional() });
const tokensFileSchema = z.preprocess((value) => (Array.isArray(value) ? { tokens: value } : value), z.object({ tokens: z.array(tokenEntry) }));

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

export interface TokenEntry {
  token: string;
  principal: string;
  role: Role;
  nodes?: readonly string[] | undefined;
  forwards?: boolean | undefined;
}

/** The configured tokens, looked up by digest in constant time per candidate. */
export class TokenTable {
  readonly #entries: Array<{ digest: Buffer; principal: Principal }>;

  constructor(entries: ReadonlyArray<TokenEntry>) {
    this.#entries = entries.map((entry) => ({ digest: digest(entry.token), principal: { id: entry.principal, role: entry.role, ...(entry.nodes ? { nodes: [...entry.nodes] } : {}), ...(entry.forwards ? { forwards: true } : {}) } }));
  }

  /** This table and more entries (a site adds the token it hands its centre). */
  with(entries: ReadonlyArray<TokenEntry>): TokenTable {
    const table = new TokenTable([]);
    table.#entries.push(...this.#entries, ...new TokenTable(entries).#entries);
    return table;
  }

  get size(): number {
    return this.#entries.length;
  }

  /** The principal a token belongs to, or null. */
  resolve(token: string): Principal | null {
    const candidate = digest(token);
    let found: Principal | null = null;
    for (const entry of this.#entries) if (timingSafeEqual(entry.digest, candidate)) found = entry.principal;
    return found;
  }
}

/** Parses `token=principal:role,token=principal:role` (the `FLEET_LEDGER_TOKENS` form); an agent's node scope
 * follows its role: `token=gpu-host-17:agent@dc1-r07-n17` or `@dc1-r07-*;dc1-r08-*`. */
export function parseTokensEnv(text: string): TokenTable {
  const entries = text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((part, index) => {
      const match = /^([^=]+)=([^:]+):([a-z]+)(?:@(.+))?$/.exec(part);
      if (!match) throw new Error(`FLEET_LEDGER_TOKENS entry ${index + 1} is not token=principal:role[@node-pattern;...]`);
      const [, token, principal, role, scope] = match as unknown as [string, string, string, string, string | undefined];
      const nodes = scope?.split(';').filter((pattern) => pattern.length > 0);
      if (nodes && (nodes.length === 0 || nodes.some((pattern) => !nodePattern.safeParse(pattern).success))) throw new Error(`FLEET_LEDGER_TOKENS entry ${index + 1}: invalid node pattern`);
      if (!(roles as readonly string[]).includes(role)) throw new Error(`FLEET_LEDGER_TOKENS entry ${index + 1}: unknown role '${role}' (known: ${roles.join(', ')})`);
      if (!principalId.safeParse(principal).success) throw new Error(`FLEET_LEDGER_TOKENS entry ${index + 1}: invalid principal`);
      if (token.length < 16) throw new Error(`FLEET_LEDGER_TOKENS entry ${index + 1}: tokens have at least 16 characters`);
      return { token, principal, role: role as Role, ...(nodes ? { nodes } : {}) };
    });
  return new TokenTable(entries);
}

/** Reads a JSON tokens file (see `tokensFileSchema`). */
export function readTokensFile(path: string): TokenTable {
  const parsed = tokensFileSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`tokens file ${path}: ${issue?.path.join('.') || '(root)'} ${issue?.message ?? 'is invalid'}`);
  }
  return new TokenTable(parsed.data.tokens);
}

/** Tokens from `FLEET_LEDGER_TOKENS_FILE`, else `FLEET_LEDGER_TOKENS`, else null. */
export function tokensFromEnvironment(env: NodeJS.ProcessEnv = process.env): TokenTable | null {
  if (env.FLEET_LEDGER_TOKENS_FILE) return readTokensFile(env.FLEET_LEDGER_TOKENS_FILE);
  if (env.FLEET_LEDGER_TOKENS) return parseTokensEnv(env.FLEET_LEDGER_TOKENS);
  return null;
}

export interface DemoTokens {
  table: TokenTable;
  /** One token per role, to print once. */
  tokens: Array<{ token: string; principal: string; role: Role }>;
  /** Where they were stored (mode 0600), when a folder was given. */
  path: string | null;
}

/**
 * Random tokens for the demo, one per role (`demo-operator`, `demo-analyst`, ...). With `dataDir`, they are
 * written to `<dataDir>/api-tokens.json` with mode 0600 (re-used on the next start if present).
 */
export function generateDemoTokens(dataDir?: string): DemoTokens {
  const path = dataDir ? join(dataDir, 'api-tokens.json') : null;
  if (path && existsSync(path)) {
    const stored = tokensFileSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
    return { table: new TokenTable(stored.tokens), tokens: stored.tokens, path };
  }
  // The demo's agent speaks for any simulated node; a real agent's token names its own host (see `Principal.nodes`).
  const tokens = roles.map((role) => ({ token: `fl_${randomBytes(24).toString('base64url')}`, principal: `demo-${role}`, role, ...(role === 'agent' ? { nodes: ['*'] } : {}) }));
  if (path && dataDir) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(path, `${JSON.stringify({ tokens }, null, 2)}\n`, { mode: 0o600 });
    chmodSync(path, 0o600);
  }
  return { table: new TokenTable(tokens), tokens, path };
}

/** The tokens a served API authenticates with, and the demo tokens to print once it listens (none when configured). */
export function apiTokens(dataDir?: string, env: NodeJS.ProcessEnv = process.env): { table: TokenTable; demo: DemoTokens | null } {
  const configured = tokensFromEnvironment(env);
  if (configured) return { table: configured, demo: null };
  const demo = generateDemoTokens(dataDir);
  return { table: demo.table, demo };
}

/** The one-time listing of demo tokens, for the terminal only (never through the logger). */
export function demoTokenListing(title: string, demo: DemoTokens): string {
  return `${title}${demo.path ? ` (stored 0600 in ${demo.path})` : ''}:\n${demo.tokens.map((t) => `  ${t.role.padEnd(9)} ${t.principal.padEnd(15)} ${t.token}`).join('\n')}\n`;
}
