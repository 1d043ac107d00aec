/**
 * Test helpers: real HTTP against the simulator with undici, basic auth and Redfish session logins.
 */
import { Agent, request } from 'undici';
import type { SimBmcInfo } from '../../src/sim/index.ts';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** One agent per test file, so keep-alive connections do not leak between files. */
export const agent = new Agent({ connections: 64, keepAliveTimeout: 1000 });

export function basic(bmc: Pick<SimBmcInfo, 'username' | 'password'>, password = bmc.password): string {
  return `Basic ${Buffer.from(`${bmc.username}:${password}`).toString('base64')}`;
}

export async function call(
  url: string,
  options: { method?: 'GET' | 'POST' | 'DELETE' | 'PATCH'; headers?: Record<string, string>; json?: unknown; timeoutMs?: number } = {},
): Promise<Reply> {
  // An abort signal rather than undici's own timeouts, whose timers tick too coarsely for sped-up clocks.
  const response = await request(url, {
    dispatcher: agent,
    method: options.method ?? 'GET',
    headers: { ...(options.json !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
    body: options.json !== undefined ? JSON.stringify(options.json) : undefined,
    signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
  });
  const text = await response.body.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: keep the text.
  }
  return { status: response.statusCode, headers: response.headers, body };
}

/** GET with basic auth. */
export function get(bmc: SimBmcInfo, path: string, headers: Record<string, string> = {}, timeoutMs?: number): Promise<Reply> {
  return call(`${bmc.baseUrl}${path}`, { headers: { authorization: basic(bmc), ...headers }, ...(timeoutMs ? { timeoutMs } : {}) });
}

/** Opens a Redfish session. */
export function login(bmc: SimBmcInfo, password = bmc.password): Promise<Reply> {
  return call(`${bmc.baseUrl}/redfish/v1/SessionService/Sessions`, { method: 'POST', json: { UserName: bmc.username, Password: password } });
}

/** Resolves to 'timeout' when the BMC does not answer within `ms` (a dark BMC), else the reply. */
export async function answerWithin(bmc: SimBmcInfo, path: string, ms: number): Promise<Reply | 'timeout'> {
  try {
    return await get(bmc, path, {}, ms);
  } catch (error) {
    const { code, name } = error as { code?: string; name?: string };
    if (name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_SOCKET' || code === 'ECONNRESET') return 'timeout';
    throw error;
  }
}

export function messageIds(body: unknown): string[] {
  const error = (body as { error?: { '@Message.ExtendedInfo'?: Array<{ MessageId?: string }> } }).error;
  return (error?.['@Message.ExtendedInfo'] ?? []).map((info) => info.MessageId ?? '');
}
