/**
 * The file credential store: the operator's credentials file (`{ "<credentialRef>": { "username", "password",
 * "endpoints": [...] } }`, mode 0600, never written by fleet-ledger) and beside it the versions rotations staged
 * (`<file>.versions`, one JSON line per operation, mode 0600, appended and synced before `stage` answers).
 *
 * - The operator's entry of a reference is one version, its id the digest of its secret (as before versions): editing
 *   it by hand is a new version and, until a rotation retires older ones, the reference's default.
 * - `stage` appends the new versions in one write under an exclusive lock file, synced; a version id already staged
 *   is answered as it is (idempotent: a rotation restarted after a crash gets the secret it staged before).
 * - `retire` rewrites the versions file in one operation (written whole, synced, renamed into place): each reference
 *   keeps the version named, which becomes its default; the other staged secrets are gone from the file, and the
 *   operator's entry, if retired, is tombstoned (the store never edits the operator's file).
 * - Both files are re-read when they change (another process staged, the operator edited); a file caught
 *   half-written is ignored and the last good copy stays in force. The first read must be good: a bad file throws a
 *   `CredentialFileError` naming the reference and field, never a secret.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { credentialDigest, plainVersionOf, type CredentialVersionInfo, type StagedVersion, type StoredCredential, type VersionedCredentialStore } from './credential-store.js';

/** Why a credentials file cannot be used; names the credential and field, never a secret. */
export class CredentialFileError extends Error {}

interface OperatorEntry {
  username: string;
  password: string;
  endpoints: string[];
}

type VersionLine =
  | { op: 'stage'; ref: string; version: string; username: string; password: string; at: number }
  | { op: 'default'; ref: string; version: string; operatorVersion: string | null }
  | { op: 'tombstone'; ref: string; version: string };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses the operator's file, refusing it (naming the reference and field) when an entry is not a usable credential. */
export function parseOperatorCredentials(path: string, text: string): Map<string, OperatorEntry> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new CredentialFileError(`${path} is not JSON (${error instanceof SyntaxError ? 'syntax error' : String(error)})`);
  }
  if (!isObject(raw)) throw new CredentialFileError(`${path}: (root): must be an object of credentials by reference`);
  const table = new Map<string, OperatorEntry>();
  for (const [ref, entry] of Object.entries(raw)) {
    if (ref.length === 0) throw new CredentialFileError(`${path}: a credential reference is empty`);
    if (!isObject(entry)) throw new CredentialFileError(`${path}: ${ref}: must be an object with username, password and endpoints`);
    const extra = Object.keys(entry).find((field) => field !== 'username' && field !== 'password' && field !== 'endpoints');
    if (extra !== undefined) throw new CredentialFileError(`${path}: ${ref}: unrecognized key ${JSON.stringify(extra)}`);
    if (typeof entry.username !== 'string' || entry.username.length === 0) throw new CredentialFileError(`${path}: ${ref}.username: must be a non-empty string`);
    if (typeof entry.password !== 'string' || entry.password.length === 0) throw new CredentialFileError(`${path}: ${ref}.password: must be a non-empty string`);
    const endpoints = entry.endpoints;
    if (!Array.isArray(endpoints) || endpoints.length === 0 || !endpoints.every((item) => typeof item === 'string' && item.length > 0)) {
      throw new CredentialFileError(`${path}: ${ref}.endpoints: must list at least one address the secret may be sent to`);
    }
    table.set(ref, { username: entry.username, password: entry.password, endpoints: endpoints as string[] });
  }
  return table;
}

function parseLines(text: string): VersionLine[] {
  const lines: VersionLine[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const parsed = JSON.parse(line) as VersionLine;
      if (isObject(parsed) && typeof parsed.ref === 'string' && typeof parsed.version === 'string') lines.push(parsed);
    } catch {
      // A line cut by a crash mid-write (only ever the last): it was never acknowledged.
    }
  }
  return lines;
}

/** A short wait without blocking the loop. */
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class FileCredentialStore implements VersionedCredentialStore {
  readonly path: string;
  readonly versionsPath: string;
  #operator: Map<string, OperatorEntry>;
  #operatorSeen: string;
  #staged = new Map<string, Map<string, { username: string; password: string }>>();
  #defaults = new Map<string, { version: string; operatorVersion: string | null }>();
  #tombstones = new Map<string, Set<string>>();
  #versionsSeen = '';

  readonly #recheckMs: number;

  /** `recheckMs`: how often the files are looked at for changes (default 250 ms; 0: at every lookup). */
  constructor(path: string, options: { recheckMs?: number } = {}) {
    this.path = path;
    this.#recheckMs = options.recheckMs ?? 250;
    this.versionsPath = `${path}.versions`;
    const stat = statSync(path);
    if ((stat.mode & 0o077) !== 0) throw new Error(`${path} is readable by others (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 it`);
    this.#operator = parseOperatorCredentials(path, readFileSync(path, 'utf8'));
    this.#operatorSeen = `${stat.mtimeMs}:${stat.size}`;
    this.#refreshVersions(true);
  }

  #refreshOperator(): void {
    const stat = statSync(this.path, { throwIfNoEntry: false });
    const now = stat ? `${stat.mtimeMs}:${stat.size}` : this.#operatorSeen;
    if (now === this.#operatorSeen) return;
    try {
      this.#operator = parseOperatorCredentials(this.path, readFileSync(this.path, 'utf8'));
      this.#operatorSeen = now;
    } catch {
      // Half-written or broken: the last good table stays in force; tried again at the next lookup.
    }
  }

  #refreshVersions(force = false): void {
    const stat = statSync(this.versionsPath, { throwIfNoEntry: false });
    const now = stat ? `${stat.ino}:${stat.mtimeMs}:${stat.size}` : 'absent';
    if (!force && now === this.#versionsSeen) return;
    this.#versionsSeen = now;
    this.#staged = new Map();
    this.#defaults = new Map();
    this.#tombstones = new Map();
    if (!stat) return;
    if ((stat.mode & 0o077) !== 0) throw new Error(`${this.versionsPath} is readable by others (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 it`);
    for (const line of parseLines(readFileSync(this.versionsPath, 'utf8'))) this.#apply(line);
  }

  #apply(line: VersionLine): void {
    switch (line.op) {
      case 'stage': {
        let versions = this.#staged.get(line.ref);
        if (!versions) this.#staged.set(line.ref, (versions = new Map()));
        if (!versions.has(line.version)) versions.set(line.version, { username: line.username, password: line.password });
        return;
      }
      case 'default':
        this.#defaults.set(line.ref, { version: line.version, operatorVersion: line.operatorVersion });
        return;
      case 'tombstone': {
        let set = this.#tombstones.get(line.ref);
        if (!set) this.#tombstones.set(line.ref, (set = new Set()));
        set.add(line.version);
        return;
      }
      default:
        return;
    }
  }

  #checkedAt = 0;

  /** Looks at both files at most every 250 ms (the poller asks per visit, tens of thousands of times a minute). */
  #refresh(): void {
    const now = Date.now();
    if (now - this.#checkedAt < this.#recheckMs) return;
    this.#checkedAt = now;
    this.#refreshOperator();
    this.#refreshVersions();
  }

  /** The default version id of a reference: the operator's entry, unless a retirement named another since the operator last edited it. */
  #defaultVersion(ref: string): string | undefined {
    const operator = this.#operator.get(ref);
    const operatorVersion = operator ? plainVersionOf(operator.username, operator.password) : null;
    const recorded = this.#defaults.get(ref);
    if (recorded && recorded.operatorVersion === operatorVersion && this.#holds(ref, recorded.version)) return recorded.version;
    if (operatorVersion !== null && !this.#tombstones.get(ref)?.has(operatorVersion)) return operatorVersion;
    return recorded && this.#holds(ref, recorded.version) ? recorded.version : undefined;
  }

  #holds(ref: string, version: string): boolean {
    if (this.#staged.get(ref)?.has(version)) return true;
    const operator = this.#operator.get(ref);
    return operator !== undefined && plainVersionOf(operator.username, operator.password) === version && !this.#tombstones.get(ref)?.has(version);
  }

  get(credentialRef: string): StoredCredential | undefined {
    this.#refresh();
    if (!this.#operator.has(credentialRef) && !this.#staged.has(credentialRef)) return undefined;
    const version = this.#defaultVersion(credentialRef);
    return version === undefined ? undefined : this.#lookup(credentialRef, version);
  }

  getVersion(credentialRef: string, version: string): StoredCredential | undefined {
    this.#refresh();
    return this.#lookup(credentialRef, version);
  }

  #lookup(ref: string, version: string): StoredCredential | undefined {
    const operator = this.#operator.get(ref);
    // Every version of a reference may go only where the operator's entry says (no entry: nowhere).
    if (!operator) return undefined;
    const staged = this.#staged.get(ref)?.get(version);
    if (staged) return { username: staged.username, password: staged.password, version, endpoints: operator.endpoints };
    if (plainVersionOf(operator.username, operator.password) === version && !this.#tombstones.get(ref)?.has(version)) {
      return { username: operator.username, password: operator.password, version, endpoints: operator.endpoints };
    }
    return undefined;
  }

  async stage(items: ReadonlyArray<{ credentialRef: string; version: string }>, generate: (credentialRef: string) => string): Promise<StagedVersion[]> {
    if (items.length === 0) return [];
    return this.#locked(() => {
      this.#refreshOperator();
      this.#refreshVersions(true);
      const lines: VersionLine[] = [];
      for (const { credentialRef, version } of items) {
        const operator = this.#operator.get(credentialRef);
        if (!operator) throw new CredentialFileError(`${this.path}: no credential ${credentialRef}: a version is staged only for a reference the file holds`);
        if (this.#staged.get(credentialRef)?.has(version) || lines.some((line) => line.ref === credentialRef && line.version === version)) continue;
        lines.push({ op: 'stage', ref: credentialRef, version, username: operator.username, password: generate(credentialRef), at: Date.now() });
      }
      if (lines.length > 0) {
        const fd = openSync(this.versionsPath, 'a', 0o600);
        try {
          writeSync(fd, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        for (const line of lines) this.#apply(line);
        this.#syncDirectory();
      }
      return items.map(({ credentialRef, version }) => {
        const secret = this.#staged.get(credentialRef)!.get(version)!;
        return { credentialRef, version, digest: credentialDigest(credentialRef, version, secret.username, secret.password) };
      });
    });
  }

  async retire(items: ReadonlyArray<{ credentialRef: string; keep: string }>): Promise<{ versionsRetired: number }> {
    if (items.length === 0) return { versionsRetired: 0 };
    return this.#locked(() => {
      this.#refreshOperator();
      this.#refreshVersions(true);
      let versionsRetired = 0;
      const keepOf = new Map<string, string>();
      for (const { credentialRef, keep } of items) if (this.#holds(credentialRef, keep)) keepOf.set(credentialRef, keep);
      const lines: VersionLine[] = [];
      const refs = new Set([...this.#staged.keys(), ...this.#defaults.keys(), ...this.#tombstones.keys()]);
      for (const ref of refs) {
        const keep = keepOf.get(ref);
        for (const [version, secret] of this.#staged.get(ref) ?? []) {
          if (keep !== undefined && version !== keep) {
            versionsRetired++;
            continue;
          }
          lines.push({ op: 'stage', ref, version, username: secret.username, password: secret.password, at: 0 });
        }
        for (const version of this.#tombstones.get(ref) ?? []) lines.push({ op: 'tombstone', ref, version });
        const recorded = this.#defaults.get(ref);
        if (keep === undefined && recorded) lines.push({ op: 'default', ref, version: recorded.version, operatorVersion: recorded.operatorVersion });
      }
      for (const [ref, keep] of keepOf) {
        const operator = this.#operator.get(ref);
        const operatorVersion = operator ? plainVersionOf(operator.username, operator.password) : null;
        if (operatorVersion !== null && operatorVersion !== keep && !this.#tombstones.get(ref)?.has(operatorVersion)) {
          lines.push({ op: 'tombstone', ref, version: operatorVersion });
          versionsRetired++;
        }
        lines.push({ op: 'default', ref, version: keep, operatorVersion });
      }
      const temporary = `${this.versionsPath}.tmp`;
      const fd = openSync(temporary, 'w', 0o600);
      try {
        writeSync(fd, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temporary, this.versionsPath);
      this.#syncDirectory();
      this.#refreshVersions(true);
      return { versionsRetired };
    });
  }

  versions(credentialRef: string): CredentialVersionInfo[] {
    this.#refresh();
    const out: CredentialVersionInfo[] = [];
    const defaultVersion = this.#defaultVersion(credentialRef);
    const operator = this.#operator.get(credentialRef);
    if (operator) {
      const version = plainVersionOf(operator.username, operator.password);
      if (!this.#tombstones.get(credentialRef)?.has(version)) out.push({ version, digest: credentialDigest(credentialRef, version, operator.username, operator.password), isDefault: version === defaultVersion, staged: false });
    }
    for (const [version, secret] of this.#staged.get(credentialRef) ?? []) {
      out.push({ version, digest: credentialDigest(credentialRef, version, secret.username, secret.password), isDefault: version === defaultVersion, staged: true });
    }
    return out;
  }

  #syncDirectory(): void {
    try {
      const fd = openSync(dirname(this.versionsPath), 'r');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch {
      // Not every file system lets a directory be synced; the file itself was.
    }
  }

  /** Runs `body` holding the versions file's lock (an exclusive lock file; one left by a dead process for 30 s is taken over). */
  async #locked<T>(body: () => T): Promise<T> {
    const lock = `${this.versionsPath}.lock`;
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        closeSync(openSync(lock, 'wx', 0o600));
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const stat = statSync(lock, { throwIfNoEntry: false });
        if (stat && Date.now() - stat.mtimeMs > 30_000) {
          try {
            unlinkSync(lock);
          } catch {
            // Someone else took it over first.
          }
          continue;
        }
        if (Date.now() > deadline) throw new Error(`${lock} is held by another process for more than 30 s`);
        await sleep(10 + Math.random() * 20);
      }
    }
    try {
      return body();
    } finally {
      try {
        unlinkSync(lock);
      } catch {
        // Already gone.
      }
    }
  }
}

/** Writes an operator credentials file (mode 0600): the demo seeds one from the simulator's BMCs. */
export function writeOperatorCredentials(path: string, table: Record<string, OperatorEntry>): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(table), { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}
