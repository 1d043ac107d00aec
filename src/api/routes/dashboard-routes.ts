/** The dashboard: one static page and its ES modules, served as files (no build step). */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { ZodApp } from '../api-context.js';
import { ApiError } from '../api-error.js';

const dashboardDir = new URL('../dashboard/', import.meta.url);
const files: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
  'fleet-canvas.js': 'text/javascript; charset=utf-8',
  'charts.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
};

export function dashboardRoutes(app: ZodApp): void {
  const serve = async (name: string, reply: { header: (k: string, v: string) => unknown }) => {
    const type = files[name];
    if (!type) throw new ApiError('API_NOT_FOUND', { resource: 'file', id: name }, `no dashboard file ${name}`);
    reply.header('content-type', type);
    reply.header('cache-control', 'no-cache');
    return readFile(new URL(name, dashboardDir), 'utf8');
  };
  app.get('/', { schema: { hide: true } }, (_request, reply) => serve('index.html', reply));
  app.get('/dashboard/:file', { schema: { hide: true, params: z.object({ file: z.string().max(64) }) } }, (request, reply) => serve(request.params.file, reply));
}
