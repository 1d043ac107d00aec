/**
 * One HTTP request to a BMC with its own deadline and a bounded answer, dispatched straight to an undici dispatcher.
 *
 * Guarantees (what `RedfishClient` promises of each request):
 * - the request's deadline covers everything, waiting for a connection, headers and body alike: when it passes the
 *   promise is rejected at once with the caller's timeout error and the request is aborted (its connection dropped);
 * - the visit's deadline (`RequestBudget`) cuts every request in flight the moment it passes, with its own error;
 * - an answer larger than `maxBodyBytes` is refused as soon as its `Content-Length` or its bytes say so, never kept
 *   whole in memory, and the request is aborted;
 * - a request whose `guard` no longer holds when undici is about to write it is not written (`DRIVER_FENCED`);
 * - those are `DriverError`s naming the request (`DRIVER_TIMEOUT`, `DRIVER_PROTOCOL`); every other failure is
 *   undici's error, for the caller to type.
 *
 * Why not undici's `request()`: a poller's heavy read is hundreds of small GETs a BMC, and `request()` gives each an
 * `AbortSignal` listener, a body stream and (read with `for await`) an async iterator; with an `AbortController` and
 * a visit-signal listener of ours per request, that cost more CPU per GET than undici's HTTP work itself
 * (`npm run bench:poll -- --tls`). Here a request is one handler object and one timer.
 */
import type { Dispatcher } from 'undici';
import { DriverError } from '../driver-error.js';

/** What a request answered: status, headers as undici parses them, and the body as text. */
export interface BoundedAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface BoundedRequestOptions {
  origin: string;
  /** Path and query. */
  path: string;
  /** The full URL, as errors name it. */
  url: string;
  method: Dispatcher.HttpMethod;
  headers: Record<string, string>;
  body?: string | Buffer;
  deadlineMs: number;
  maxBodyBytes: number;
  /**
   * Whether the right to talk to the BMC still holds (a poll lease, a rotation's fence), judged again as undici is
   * about to write the request: a request that waited for a connection, or a process stopped and resumed meanwhile,
   * is not sent once the right has ended (it fails with `DRIVER_FENCED`).
   */
  guard?: () => boolean;
}

/** What a request gets when the visit's deadline has passed (before it was sent, or while it was in flight). */
export function visitDeadlineError(method: string, url: string): DriverError {
  return new DriverError('DRIVER_TIMEOUT', `${method} ${url} not completed: the visit passed its total deadline`, { method, url });
}

/**
 * The visit's deadline over the requests of one client: one listener on the visit's signal while any request is in
 * flight (not one per request), which cuts them all when it fires.
 */
export class RequestBudget {
  readonly #inFlight = new Set<BoundedResponse>();
  readonly #onAbort = (): void => {
    for (const request of [...this.#inFlight]) request.cut(visitDeadlineError(request.options.method, request.options.url));
  };

  /** `signal`: the visit's deadline (none: each request's own deadline only). */
  constructor(private readonly signal: AbortSignal | undefined) {}

  get exhausted(): boolean {
    return this.signal?.aborted === true;
  }

  /** Sends one request under this budget (rejected at once when the budget is already spent). */
  send(dispatcher: Dispatcher, options: BoundedRequestOptions): Promise<BoundedAnswer> {
    if (this.signal?.aborted) return Promise.reject(visitDeadlineError(options.method, options.url));
    return new Promise<BoundedAnswer>((resolve, reject) => {
      const response = new BoundedResponse(options, resolve, reject, (ended) => {
        this.#inFlight.delete(ended);
        if (this.#inFlight.size === 0) this.signal?.removeEventListener('abort', this.#onAbort);
      });
      if (this.#inFlight.size === 0) this.signal?.addEventListener('abort', this.#onAbort, { once: true });
      this.#inFlight.add(response);
      const request: Dispatcher.DispatchOptions = { origin: options.origin, path: options.path, method: options.method, headers: options.headers };
      if (options.body !== undefined) request.body = options.body;
      try {
        dispatcher.dispatch(request, response);
      } catch (error) {
        response.cut(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }
}

/** Collects one answer within its bounds; settles its promise exactly once. */
class BoundedResponse implements Dispatcher.DispatchHandler {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  #status = 0;
  #headers: Record<string, string | string[] | undefined> = {};
  #controller: Dispatcher.DispatchController | undefined;
  /** Why the request was ended before its answer was whole (aborted at `onRequestStart` when it comes later). */
  #reason: Error | undefined;
  #settled = false;
  readonly #timer: NodeJS.Timeout;

  constructor(
    readonly options: BoundedRequestOptions,
    private readonly resolve: (answer: BoundedAnswer) => void,
    private readonly reject: (error: Error) => void,
    private readonly ended: (response: BoundedResponse) => void,
  ) {
    this.#timer = setTimeout(this.#timedOut, options.deadlineMs);
  }

  readonly #timedOut = (): void => {
    const { method, url, deadlineMs } = this.options;
    this.cut(new DriverError('DRIVER_TIMEOUT', `${method} ${url} passed its ${deadlineMs} ms deadline`, { method, url, deadlineMs }));
  };

  #tooLarge(): DriverError {
    return new DriverError('DRIVER_PROTOCOL', `answer larger than ${this.options.maxBodyBytes} bytes`, { url: this.options.url, method: this.options.method });
  }

  /** Ends the request now with `error` (its deadline, the visit's, an answer too large). */
  cut(error: Error): void {
    if (this.#settled) return;
    this.#reason = error;
    this.#settle();
    this.reject(error);
    this.#controller?.abort(error);
  }

  #settle(): void {
    this.#settled = true;
    clearTimeout(this.#timer);
    this.ended(this);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (!this.#reason && this.options.guard && !this.options.guard()) {
      const { method, url } = this.options;
      this.cut(new DriverError('DRIVER_FENCED', `${method} ${url} not sent: the right to talk to this BMC ended before it was written`, { method, url }));
      return;
    }
    if (this.#reason) controller.abort(this.#reason);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200) return; // 1xx: informational, the answer follows
    this.#status = statusCode;
    this.#headers = headers;
    const length = Number(headers['content-length']);
    if (length > this.options.maxBodyBytes) this.cut(this.#tooLarge());
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    this.#size += chunk.length;
    if (this.#size > this.options.maxBodyBytes) {
      this.cut(this.#tooLarge());
      return;
    }
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    this.#settle();
    const text = this.#chunks.length === 1 ? this.#chunks[0]!.toString('utf8') : Buffer.concat(this.#chunks, this.#size).toString('utf8');
    this.resolve({ status: this.#status, headers: this.#headers, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (this.#settled) return;
    this.#settle();
    this.reject(error);
  }
}
