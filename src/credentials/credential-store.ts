/**
 * Versioned credentials: what a secret manager holds for each `credentialRef`, version by version. The ledger never
 * holds a secret; it records which version of a reference is in force on each node (`BmcPasswordChanged`), so the
 * poller and every driver ask the store for that version, not for whatever is latest.
 *
 * A store (the file store here, or a real secret manager behind the same interface) promises:
 * - `stage` writes a new version durably before it answers, and is idempotent per (reference, version id): staging
 *   again after a crash answers the version staged before, never a second secret;
 * - a version, once staged, is answered by `getVersion` until it is retired, whatever the default;
 * - `retire` is one operation for any number of references (a fleet's old secrets are not deleted one round trip at
 *   a time): each reference keeps the one version named, which becomes its default.
 */
import { createHash, randomInt } from 'node:crypto';

/** One version of a credential, as the poller and the drivers use it (structurally the poller's `Credential`). */
export interface StoredCredential {
  username: string;
  password: string;
  /** The version id: what the ledger records as in force, never the secret. */
  version: string;
  /** Where this secret may be sent (see the poller's `Credential.endpoints`). */
  endpoints: readonly string[];
}

export interface StagedVersion {
  credentialRef: string;
  version: string;
  digest: string;
}

export interface CredentialVersionInfo {
  version: string;
  digest: string;
  /** What a node with no version recorded in the ledger uses. */
  isDefault: boolean;
  /** Staged by a rotation (else: the operator's own entry of the reference). */
  staged: boolean;
}

export interface VersionedCredentialStore {
  /** The reference's default version. */
  get(credentialRef: string): StoredCredential | undefined;
  /** One version of the reference; undefined when the store does not hold it (never staged, or retired). */
  getVersion(credentialRef: string, version: string): StoredCredential | undefined;
  /**
   * Stages one new version of each reference under the version id given (a rotation stages under its own id), with a
   * secret from `generate`, durably and in one write. A version already held under that id is answered as it is.
   */
  stage(items: ReadonlyArray<{ credentialRef: string; version: string }>, generate: (credentialRef: string) => string): Promise<StagedVersion[]>;
  /** In one operation: each reference keeps only `keep` (its default from now on); the secrets of its other versions are deleted. */
  retire(items: ReadonlyArray<{ credentialRef: string; keep: string }>): Promise<{ versionsRetired: number }>;
  versions(credentialRef: string): CredentialVersionInfo[];
}

/**
 * A short digest of a version: tells versions apart and lets an auditor holding the store check the ledger against it.
 * Keyed by reference and version, so equal secrets under two references do not show as equal.
 */
export function credentialDigest(credentialRef: string, version: string, username: string, password: string): string {
  return createHash('sha256').update(`fleet-ledger-credential\u0000${credentialRef}\u0000${version}\u0000${username}\u0000${password}`).digest('hex').slice(0, 16);
}

/** The version id of a plain credentials file's entry: a digest of its own secret (a rewrite of it is a new version). */
export function plainVersionOf(username: string, password: string): string {
  return createHash('sha256').update(`${username}\u0000${password}`).digest('hex').slice(0, 16);
}

/**
 * A password most BMC policies accept (iDRAC's 20-character maximum, iLO's and OpenBMC's minimum of 8, Supermicro's
 * classes): 16 characters with upper and lower case letters, digits, and two of `-_.!` (no quote, colon or space,
 * which some vendors refuse or mangle).
 */
export function generateBmcPassword(length = 16): string {
  const classes = ['ABCDEFGHJKLMNPQRSTUVWXYZ', 'abcdefghijkmnopqrstuvwxyz', '23456789', '-_.!'];
  const all = classes.slice(0, 3).join('');
  const chars = [pick(classes[0]!), pick(classes[1]!), pick(classes[2]!), pick(classes[3]!), pick(classes[3]!)];
  while (chars.length < length) chars.push(pick(all));
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j]!, chars[i]!];
  }
  // Never a leading special character (a few web UIs trim or refuse it).
  if (classes[3]!.includes(chars[0]!)) {
    const swap = chars.findIndex((c) => !classes[3]!.includes(c));
    [chars[0], chars[swap]] = [chars[swap]!, chars[0]!];
  }
  return chars.join('');
}

function pick(from: string): string {
  return from[randomInt(from.length)]!;
}

/** A store in memory (tests, and a process that seeds versions itself). */
export class MemoryCredentialStore implements VersionedCredentialStore {
  readonly #refs = new Map<string, { endpoints: readonly string[]; username: string; versions: Map<string, { password: string; staged: boolean }>; defaultVersion: string }>();

  /** Sets a reference's operator entry (its default version is the digest of the secret). */
  put(credentialRef: string, entry: { username: string; password: string; endpoints: readonly string[] }): string {
    const version = plainVersionOf(entry.username, entry.password);
    const existing = this.#refs.get(credentialRef);
    const versions = existing?.versions ?? new Map();
    versions.set(version, { password: entry.password, staged: false });
    this.#refs.set(credentialRef, { endpoints: entry.endpoints, username: entry.username, versions, defaultVersion: version });
    return version;
  }

  get(credentialRef: string): StoredCredential | undefined {
    const ref = this.#refs.get(credentialRef);
    return ref ? this.getVersion(credentialRef, ref.defaultVersion) : undefined;
  }

  getVersion(credentialRef: string, version: string): StoredCredential | undefined {
    const ref = this.#refs.get(credentialRef);
    const entry = ref?.versions.get(version);
    return ref && entry ? { username: ref.username, password: entry.password, version, endpoints: ref.endpoints } : undefined;
  }

  async stage(items: ReadonlyArray<{ credentialRef: string; version: string }>, generate: (credentialRef: string) => string): Promise<StagedVersion[]> {
    return items.map(({ credentialRef, version }) => {
      const ref = this.#refs.get(credentialRef);
      if (!ref) throw new Error(`no credential ${credentialRef} in the store: a version is staged only for a reference it holds`);
      if (!ref.versions.has(version)) ref.versions.set(version, { password: generate(credentialRef), staged: true });
      return { credentialRef, version, digest: credentialDigest(credentialRef, version, ref.username, ref.versions.get(version)!.password) };
    });
  }

  async retire(items: ReadonlyArray<{ credentialRef: string; keep: string }>): Promise<{ versionsRetired: number }> {
    let versionsRetired = 0;
    for (const { credentialRef, keep } of items) {
      const ref = this.#refs.get(credentialRef);
      if (!ref?.versions.has(keep)) continue;
      for (const version of [...ref.versions.keys()]) {
        if (version === keep) continue;
        ref.versions.delete(version);
        versionsRetired++;
      }
      ref.defaultVersion = keep;
    }
    return { versionsRetired };
  }

  versions(credentialRef: string): CredentialVersionInfo[] {
    const ref = this.#refs.get(credentialRef);
    if (!ref) return [];
    return [...ref.versions].map(([version, entry]) => ({ version, digest: credentialDigest(credentialRef, version, ref.username, entry.password), isDefault: version === ref.defaultVersion, staged: entry.staged }));
  }
}
