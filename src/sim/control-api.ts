/**
 * The control API on the simulator's control URL:
 * `GET /sim/stats` (fleet aggregate; `?bmc=<id>[,<id>...]` or `?bmc=*` for per-BMC detail), `GET /sim/fleet`,
 * `GET /sim/tls` (TLS counters, `?bmc=<id>` for one BMC), `GET /sim/firmware`, `GET /sim/updates`, `GET /sim/images/<name>` (a stand-in image), `GET /sim/faults`, `POST /sim/faults` (inject;
 * `Content-Type: application/json` required, so a web page cannot post one), `DELETE /sim/faults/<id>` (end early).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SimError, controlStatus } from './errors.ts';
import type { Simulator } from './simulator.ts';

export async function handleControlRequest(simulator: Simulator, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://control');
  const method = request.method ?? 'GET';
  const reply = (status: number, body: unknown): void => {
    response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
  };
  try {
    if (method === 'GET' && url.pathname === '/sim/stats') {
      const wanted = url.searchParams.get('bmc');
      if (wanted === null) return reply(200, simulator.stats());
      const ids = wanted === '*' ? simulator.bmcs.map((bmc) => bmc.id) : wanted.split(',');
      const detail = ids.map((id) => {
        const stats = simulator.bmcStats(id);
        if (!stats) throw new SimError('SIM_UNKNOWN_TARGET', `no BMC with id ${id}`, { field: 'bmc', id });
        return stats;
      });
      return reply(200, { ...simulator.stats(), detail });
    }
    if (method === 'GET' && url.pathname === '/sim/fleet') {
      return reply(200, { controlUrl: simulator.controlUrl, addressing: simulator.addressing, bmcs: simulator.fleet() });
    }
    if (method === 'GET' && url.pathname === '/sim/tls') {
      const id = url.searchParams.get('bmc');
      const counters = simulator.tlsStats(id ?? undefined);
      if (!counters) throw new SimError('SIM_NOT_FOUND', id ? `no BMC with id ${id} served over TLS` : 'the simulator serves no TLS (start it with --tls)', { field: 'bmc' });
      return reply(200, counters);
    }
    if (method === 'GET' && url.pathname === '/sim/firmware') return reply(200, { fixtures: simulator.firmwareCatalogue() });
    if (method === 'GET' && url.pathname === '/sim/faults') return reply(200, { faults: simulator.faults() });
    if (method === 'GET' && url.pathname === '/sim/updates') return reply(200, simulator.updateStats());
    if (method === 'GET' && url.pathname.startsWith('/sim/images/')) {
      // A stand-in image for pushes: the bytes are not firmware, the name carries the version.
      const body = Buffer.alloc(64 * 1024, url.pathname);
      response.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(body.length) }).end(body);
      return;
    }
    if (method === 'POST' && url.pathname === '/sim/faults') {
      // A web page can POST text/plain to localhost without asking (no CORS preflight); it cannot send
      // application/json. So any page an operator opens could darken the fleet unless the type is required.
      const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
      if (type !== 'application/json') {
        throw new SimError('SIM_FAULT_INVALID', `fault is invalid: (content-type): must be application/json, not ${type || 'absent'}`, { field: 'content-type' });
      }
      let body: unknown;
      try {
        body = JSON.parse(await readText(request));
      } catch {
        throw new SimError('SIM_FAULT_INVALID', 'fault is invalid: (root): body is not JSON');
      }
      return reply(201, { fault: simulator.injectFault(body as never) });
    }
    const clear = /^\/sim\/faults\/([^/]+)$/.exec(url.pathname);
    if (method === 'DELETE' && clear) {
      const id = clear[1] ?? '';
      if (!simulator.clearFault(id)) throw new SimError('SIM_UNKNOWN_TARGET', `no active fault ${id}`, { field: 'id', id });
      response.writeHead(204).end();
      return;
    }
    throw new SimError('SIM_NOT_FOUND', `no control endpoint ${method} ${url.pathname}`, { method, path: url.pathname });
  } catch (error) {
    if (error instanceof SimError) return reply(controlStatus(error.code), { code: error.code, message: error.message, data: error.data });
    throw error;
  }
}

async function readText(request: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return text;
}
