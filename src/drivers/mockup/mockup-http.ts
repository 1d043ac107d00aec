import type { IncomingMessage, ServerResponse } from 'node:http';

/** `/redfish/v1/Systems/1/` -> `/redfish/v1/Systems/1`; keeps a decoded query (`?$skip=50`). */
export function requestKey(rawUrl: string): { path: string; key: string } {
  const url = new URL(rawUrl, 'http://mockup');
  const path = decodeURIComponent(url.pathname).replace(/\/+$/, '') || '/';
  const query = decodeURIComponent(url.search);
  return { path, key: `${path}${query}` };
}

/** Answers with a JSON body (or none), as a Redfish service does. */
export function send(response: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'odata-version': '4.0', ...headers });
  response.end(text);
}

export async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
