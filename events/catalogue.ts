import type { z } from 'zod';
import type { EventDefinition } from './define-event.js';

/** One reason an event payload was refused: which field, and why. */
export interface PayloadIssue {
  path: string;
  message: string;
}

export type PayloadCheck =
  | { ok: true; schemaVersion: number; data: unknown }
  | { ok: false; reason: 'unknown-type' | 'unknown-version' | 'invalid-payload'; issues: PayloadIssue[] };

/** Keys that name a credential; a payload carrying one is refused so no secret ever enters the log. */
const credentialKey = /^(password|passwd|secret|token|apikey|api_key|privatekey|private_key|bearer)$/i;

/** What a credential-named member holds once a driver has redacted it; the catalogue accepts it (no secret left). */
export const redactedCredential = '[redacted]';

function credentialPaths(value: unknown): string[] {
  const found: string[] = [];
  collectCredentialPaths(value, '', found);
  return found;
}

/** Walks `value` without building a path for a member that holds no credential (every append's payload is walked). */
function collectCredentialPaths(value: unknown, path: string, found: string[]): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      const item: unknown = value[index];
      if (item !== null && typeof item === 'object') collectCredentialPaths(item, path ? `${path}.${index}` : String(index), found);
    }
    return;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item = (value as Record<string, unknown>)[key];
    if (credentialKey.test(key)) {
      if (item !== redactedCredential && item !== null) found.push(path ? `${path}.${key}` : key);
    } else if (item !== null && typeof item === 'object') {
      collectCredentialPaths(item, path ? `${path}.${key}` : key, found);
    }
  }
}

/**
 * A device's raw value with every credential-named member's value replaced by `redactedCredential`. Drivers keep
 * what they could not interpret (OEM blobs, say); a BMC whose OEM data has a member named `Token` would otherwise
 * have every observation of that node refused, for good.
 */
export function withoutCredentials(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCredentials);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, credentialKey.test(key) ? redactedCredential : withoutCredentials(item)]),
  );
}

function issuesOf(error: z.ZodError): PayloadIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.message,
  }));
}

/**
 * The event catalogue: every type the ledger accepts, its current schema, and the upcasters that lift
 * stored older versions. Validation happens here, before anything is written; reading goes through
 * `upcast` so consumers only ever see current versions.
 */
export class EventCatalogue {
  readonly #definitions = new Map<string, EventDefinition>();

  constructor(definitions: Iterable<EventDefinition>) {
    for (const definition of definitions) {
      if (this.#definitions.has(definition.type)) throw new Error(`event type ${definition.type} is defined twice`);
      this.#definitions.set(definition.type, definition);
    }
  }

  get(type: string): EventDefinition | undefined {
    return this.#definitions.get(type);
  }

  types(): string[] {
    return [...this.#definitions.keys()].sort();
  }

  definitions(): EventDefinition[] {
    return [...this.#definitions.values()];
  }

  /** Validates a proposed payload against the schema of its type and version; returns the parsed data. */
  check(type: string, data: unknown, schemaVersion?: number): PayloadCheck {
    const definition = this.#definitions.get(type);
    if (!definition) {
      return { ok: false, reason: 'unknown-type', issues: [{ path: 'type', message: `unknown event type '${type}'` }] };
    }
    const version = schemaVersion ?? definition.schemaVersion;
    const schema =
      version === definition.schemaVersion ? definition.schema : definition.previousVersions.find((p) => p.version === version)?.schema;
    if (!schema) {
      return {
        ok: false,
        reason: 'unknown-version',
        issues: [{ path: 'schemaVersion', message: `${type} has versions 1..${definition.schemaVersion}, not ${version}` }],
      };
    }
    const secrets = credentialPaths(data);
    if (secrets.length > 0) {
      return {
        ok: false,
        reason: 'invalid-payload',
        issues: secrets.map((path) => ({ path, message: 'looks like a credential; events carry credential references, never secrets' })),
      };
    }
    const parsed = schema.safeParse(data);
    if (!parsed.success) return { ok: false, reason: 'invalid-payload', issues: issuesOf(parsed.error) };
    return { ok: true, schemaVersion: version, data: parsed.data };
  }

  /** Lifts stored data of any known version to the current version of its type. Unknown types pass through. */
  upcast(type: string, schemaVersion: number, data: unknown): { schemaVersion: number; data: unknown } {
    const definition = this.#definitions.get(type);
    if (!definition || schemaVersion >= definition.schemaVersion) return { schemaVersion, data };
    let current = data;
    for (const previous of definition.previousVersions) {
      if (previous.version < schemaVersion) continue;
      current = (previous.upcast as (value: unknown) => unknown)(current);
    }
    return { schemaVersion: definition.schemaVersion, data: current };
  }
}
