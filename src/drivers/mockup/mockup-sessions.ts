import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, send } from './mockup-http.js';
import type { MockupServerOptions, MockupStats } from './mockup-server.js';
import { SESSIONS_PATH } from './mockup-tree.js';

const RAC0218_BODY = {
  error: {
    '@Message.ExtendedInfo': [
      {
        Message: 'The maximum number of user sessions is reached.',
        MessageArgs: [],
        'MessageArgs@odata.count': 0,
        MessageId: 'IDRAC.2.4.RAC0218',
        RelatedProperties: [],
        'RelatedProperties@odata.count': 0,
        Resolution: 'Close one or more sessions before opening another session.',
        Severity: 'Informational',
      },
    ],
    code: 'Base.1.7.GeneralError',
    message: 'A general error has occurred. See ExtendedInfo for more information',
  },
};

export const NO_VALID_SESSION_BODY = { error: { '@Message.ExtendedInfo': [{ MessageId: 'Base.1.4.NoValidSession' }], code: 'Base.1.4.GeneralError', message: 'See @Message.ExtendedInfo for more information.' } };

/** The mockup's session table, as a BMC keeps it: a bounded number of sessions, each by its token. */
export class MockupSessions {
  readonly #sessions = new Map<string, { id: string; user: string }>();
  readonly #limit: number;
  readonly #username: string;
  readonly #password: string;

  constructor(
    private readonly options: MockupServerOptions,
    private readonly stats: MockupStats,
  ) {
    this.#limit = options.sessionLimit ?? 8;
    this.#username = options.username ?? 'root';
    this.#password = options.password ?? 'calvin';
  }

  get size(): number {
    return this.#sessions.size;
  }

  #credentialsOk(user: unknown, pass: unknown): boolean {
    return this.options.acceptAnyCredentials === true || (user === this.#username && pass === this.#password);
  }

  /** A request with a session's token, or basic auth with the right credentials (counted). */
  authorized(request: IncomingMessage): boolean {
    const token = request.headers['x-auth-token'];
    if (typeof token === 'string' && this.#sessions.has(token)) return true;
    const authorization = request.headers.authorization;
    if (typeof authorization === 'string' && authorization.startsWith('Basic ')) {
      const [user, ...rest] = Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':');
      if (this.#credentialsOk(user, rest.join(':'))) {
        this.stats.basicAuthRequests += 1;
        return true;
      }
    }
    return false;
  }

  /** A session POST at `path`: refused or absent as configured, 401 on bad credentials, 503 RAC0218 when full. */
  async create(request: IncomingMessage, response: ServerResponse, path: string): Promise<void> {
    const { options, stats } = this;
    const text = await readBody(request);
    if (options.sessions === 'refused') {
      send(response, 405);
      return;
    }
    if (options.sessions === 'absent') {
      send(response, 404, { error: { code: 'Base.1.8.ResourceMissingAtURI', message: `The resource at the URI ${path} was not found.` } });
      return;
    }
    let credentials: { UserName?: unknown; Password?: unknown } = {};
    try {
      credentials = JSON.parse(text) as typeof credentials;
    } catch {
      send(response, 400, { error: { code: 'Base.1.8.MalformedJSON', message: 'The request body submitted was malformed JSON.' } });
      return;
    }
    if (!this.#credentialsOk(credentials.UserName, credentials.Password)) {
      send(response, 401, NO_VALID_SESSION_BODY);
      return;
    }
    if (this.#sessions.size >= this.#limit) {
      stats.sessionsRefused += 1;
      send(response, 503, RAC0218_BODY);
      return;
    }
    const token = randomUUID();
    const id = String(stats.sessionsCreated + 1);
    this.#sessions.set(token, { id, user: String(credentials.UserName) });
    stats.sessionsCreated += 1;
    const location = `${path}/${id}`;
    if (options.sessionAnswer === 'dmtf') {
      response.writeHead(204, { 'x-auth-token': token, location });
      response.end();
    } else send(response, 201, { '@odata.id': location, Id: id, UserName: credentials.UserName }, { 'x-auth-token': token, location });
  }

  /** A DELETE of session `id`: 404 when there is none. */
  remove(response: ServerResponse, id: string): void {
    const entry = [...this.#sessions.entries()].find(([, session]) => session.id === id);
    if (!entry) {
      send(response, 404);
      return;
    }
    this.#sessions.delete(entry[0]);
    this.stats.sessionsDeleted += 1;
    send(response, 204);
  }

  /** The standard session collection, listing the sessions open now. */
  list(response: ServerResponse): void {
    const members = [...this.#sessions.values()].map((session) => ({ '@odata.id': `${SESSIONS_PATH}/${session.id}` }));
    send(response, 200, { '@odata.id': SESSIONS_PATH, Name: 'Session Collection', Members: members, 'Members@odata.count': members.length });
  }
}
