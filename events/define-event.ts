import type { z } from 'zod';

/**
 * One earlier version of an event's payload, kept so that old events in the log can still be read.
 * `upcast` lifts data of this version to the next one (version + 1); chains of upcasters run in order.
 */
export interface PreviousEventVersion {
  readonly version: number;
  readonly schema: z.ZodType;
  readonly upcast: (data: never) => unknown;
}

/**
 * The definition of one event type: its family, its current schema version and payload schema, and the
 * upcasters that lift every older stored version to the current one. Pure data: no I/O.
 */
export interface EventDefinition<TType extends string = string, TSchema extends z.ZodType = z.ZodType> {
  readonly family: EventFamily;
  readonly type: TType;
  readonly schemaVersion: number;
  readonly schema: TSchema;
  readonly previousVersions: readonly PreviousEventVersion[];
  /** One sentence for the catalogue documentation. */
  readonly description: string;
}

export type EventFamily =
  | 'driver-observation'
  | 'poll-outcome'
  | 'operator-intent'
  | 'liveness'
  | 'saga-progress'
  | 'system'
  | 'application';

export function defineEvent<TType extends string, TSchema extends z.ZodType>(definition: {
  family: EventFamily;
  type: TType;
  description: string;
  schema: TSchema;
  schemaVersion?: number;
  previousVersions?: readonly PreviousEventVersion[];
}): EventDefinition<TType, TSchema> {
  const schemaVersion = definition.schemaVersion ?? 1;
  const previousVersions = [...(definition.previousVersions ?? [])].sort((a, b) => a.version - b.version);
  // The chain must be contiguous (1, 2, ..., schemaVersion - 1) so every stored version can be lifted.
  previousVersions.forEach((previous, index) => {
    if (previous.version !== index + 1) {
      throw new Error(`event ${definition.type}: previous versions must be 1..${schemaVersion - 1}, found ${previous.version}`);
    }
  });
  if (previousVersions.length !== schemaVersion - 1) {
    throw new Error(`event ${definition.type}: schemaVersion ${schemaVersion} needs ${schemaVersion - 1} previous versions`);
  }
  return { ...definition, schemaVersion, previousVersions };
}

/** The payload type of an event definition. */
export type EventData<D> = D extends EventDefinition<string, infer S> ? z.output<S> : never;
