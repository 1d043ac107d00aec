/**
 * A BMC's AccountService, for credential rotation: find the account of a user, change its password
 * (`PATCH AccountService/Accounts/<id>` `{ "Password": ... }` authenticated with the current credential), and log in
 * with a credential to learn whether the BMC takes it. Every request is basic auth: no session is opened, so a process
 * killed mid-rotation leaks none, and a vendor that ends sessions on a password change ends none of ours.
 *
 * What a caller must know: every call here authenticates, and a refused credential is a failed login on the BMC (its
 * lockout counts it). `login` makes exactly one authenticated request.
 */
import { Agent, type Dispatcher } from 'undici';
import { DriverError } from '../driver-error.js';
import { RedfishClient } from './redfish-client.js';

export interface AccountCredential {
  username: string;
  password: string;
}

export interface AccountServiceOptions {
  baseUrl: string;
  requestTimeoutMs?: number;
  insecure?: boolean;
  dispatcher?: Dispatcher;
  /** Asked before every request (a fence): false sends nothing (`DRIVER_FENCED`). */
  guard?: () => boolean;
}

const ACCOUNTS = '/redfish/v1/AccountService/Accounts';

export class RedfishAccountService {
  /** One pool of kept-alive connections for every call (closed by `close`), unless one was lent. */
  readonly #agent: Dispatcher | undefined;

  constructor(private readonly options: AccountServiceOptions) {
    this.#agent = options.dispatcher ? undefined : new Agent({ connections: 1, keepAliveTimeout: 10_000, connect: { rejectUnauthorized: !options.insecure, timeout: options.requestTimeoutMs ?? 15_000 }, headersTimeout: options.requestTimeoutMs ?? 15_000, bodyTimeout: options.requestTimeoutMs ?? 15_000 });
  }

  /** Lets the connections go. */
  async close(): Promise<void> {
    await this.#agent?.close().catch(() => undefined);
  }

  #client(credential: AccountCredential): RedfishClient {
    return new RedfishClient({
      baseUrl: this.options.baseUrl,
      username: credential.username,
      password: credential.password,
      authMode: 'basic',
      maxConcurrency: 1,
      requestTimeoutMs: this.options.requestTimeoutMs ?? 15_000,
      ...(this.options.insecure ? { insecure: true } : {}),
      dispatcher: this.options.dispatcher ?? this.#agent!,
      ...(this.options.guard ? { guard: this.options.guard } : {}),
    });
  }

  /**
   * The path of `credential.username`'s account: the collection, then its members until one names the user. A BMC
   * without an AccountService answers `DRIVER_NOT_FOUND` (or `DRIVER_UNSUPPORTED` when no member names the user).
   */
  async findAccount(credential: AccountCredential): Promise<string> {
    const client = this.#client(credential);
    try {
      await client.login();
      const collection = (await client.get(ACCOUNTS)).body as { Members?: Array<{ '@odata.id'?: unknown; UserName?: unknown }> } | undefined;
      for (const member of collection?.Members ?? []) {
        const path = member['@odata.id'];
        if (typeof path !== 'string') continue;
        // Some BMCs answer the collection expanded: the member itself names its user.
        const name = member.UserName ?? ((await client.get(path)).body as { UserName?: unknown } | undefined)?.UserName;
        if (name === credential.username) return path;
      }
      throw new DriverError('DRIVER_UNSUPPORTED', `no account of the AccountService names the user ${credential.username}`, { url: `${this.options.baseUrl}${ACCOUNTS}` });
    } finally {
      await client.close();
    }
  }

  /** Changes the account's password, authenticated with the current credential; resolves with the BMC's status. */
  async changePassword(current: AccountCredential, accountPath: string, newPassword: string): Promise<{ status: number }> {
    const client = this.#client(current);
    try {
      await client.login();
      const answer = await client.patch(accountPath, { Password: newPassword });
      return { status: answer.status };
    } finally {
      await client.close();
    }
  }

  /** One authenticated GET (the systems collection, as the poller's liveness check): resolves when the BMC takes the credential. */
  async login(credential: AccountCredential, path = '/redfish/v1/Systems'): Promise<void> {
    const client = this.#client(credential);
    try {
      await client.login();
      await client.get(path);
    } finally {
      await client.close();
    }
  }
}
