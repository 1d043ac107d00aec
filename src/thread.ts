import { Worker } from 'node:worker_threads';

/**
 * A worker thread running `entry` (the URL of a `.ts` module next to its caller). Run from TypeScript sources (tsx),
 * a worker does not inherit the main thread's loader: it registers tsx's itself before importing the entry. Run
 * from compiled JavaScript, the entry's `.js` twin is started directly.
 */
export function startThread(entry: URL, workerData: unknown): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(entry.href.replace(/\.ts$/, '.js')), { workerData });
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}
