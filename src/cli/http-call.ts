/**
 * One HTTP request through node's own `http`/`https`, its answer read whole. The command line asks the API with this
 * rather than `fetch` or the undici package: both load and compile a large HTTP client at start, which cost a query
 * command about 0.3 s of CPU beside a request of a few milliseconds. Redirects are answered, never followed.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface HttpAnswer {
  status: number;
  text: string;
}

export function httpCall(target: URL, options: { method: string; headers: Record<string, string>; body?: string | undefined; timeoutMs: number }): Promise<HttpAnswer> {
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const headers = options.body === undefined ? options.headers : { ...options.headers, 'content-length': String(Buffer.byteLength(options.body)) };
    const request = send(target, { method: options.method, headers, signal: AbortSignal.timeout(options.timeoutMs) }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(options.body);
  });
}
