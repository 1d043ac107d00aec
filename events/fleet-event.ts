/**
 * The catalogue as types: `FleetEvent` is the discriminated union of every event type, one member per type
 * (`{ type: 'NodeCordoned'; data: ... }`), its data the output of the type's *current* schema (stored older versions
 * are upcast on reading, so no consumer ever sees one). A `switch (event.type)` over it, or over a closed union of one
 * stream's events, narrows `data`; the guards here are where a recorded event (whose type is only a string) becomes a
 * member, by checking its type against the definitions: its data was validated by the catalogue before it was written.
 */
import type { z } from 'zod';
import { applicationEvents } from './application-events.js';
import { bmcCertificateEvents } from './bmc-certificates.js';
import { credentialRotationEvents, credentialStepEvents, rotationStreamEvents } from './credential-rotation.js';
import type { EventDefinition } from './define-event.js';
import { driverObservationEvents } from './driver-observations.js';
import { livenessEvents } from './liveness.js';
import { operatorIntentEvents } from './operator-intents.js';
import { pollOutcomeEvents } from './poll-outcomes.js';
import { pushEvents } from './push.js';
import { capacityStreamEvents, provisionStreamEvents, rolloutStreamEvents, sagaProgressEvents, stepStreamEvents } from './saga-progress.js';
import { systemEvents } from './system.js';

/** Every event definition the catalogue holds. */
export const fleetEventDefinitions = [
  ...driverObservationEvents,
  ...pollOutcomeEvents,
  ...pushEvents,
  ...operatorIntentEvents,
  ...livenessEvents,
  ...bmcCertificateEvents,
  ...sagaProgressEvents,
  ...credentialRotationEvents,
  ...systemEvents,
  ...applicationEvents,
] as const;

/** What every event has, typed or not: a type name and a payload. */
export interface EventShape {
  type: string;
  data: unknown;
}

/** The event one definition describes: its literal type and its current payload. */
export type DefinedEvent<D> = D extends EventDefinition<infer TType, infer TSchema> ? { type: TType; data: z.output<TSchema> } : never;

/** The closed union of the events a list of definitions describes. */
export type EventsOf<Definitions extends readonly EventDefinition[]> = DefinedEvent<Definitions[number]>;

/** Every event fleet-ledger knows, discriminated on `type`. */
export type FleetEvent = EventsOf<typeof fleetEventDefinitions>;
export type FleetEventType = FleetEvent['type'];

/** The member of `FleetEvent` with the given type (or types). */
export type EventOf<TType extends FleetEventType> = Extract<FleetEvent, { type: TType }>;

/** The current payload of an event type. */
export type DataOf<TType extends FleetEventType> = EventOf<TType>['data'];

/** The closed unions of the saga streams. */
export type RolloutStreamEvent = EventsOf<typeof rolloutStreamEvents>;
export type StepStreamEvent = EventsOf<typeof stepStreamEvents>;
export type CapacityStreamEvent = EventsOf<typeof capacityStreamEvents>;
export type ProvisionStreamEvent = EventsOf<typeof provisionStreamEvents>;
export type RotationStreamEvent = EventsOf<typeof rotationStreamEvents>;
export type CredentialStepEvent = EventsOf<typeof credentialStepEvents>;

/**
 * A guard that an event is one of a closed list of types: `event` keeps its envelope and gains the members' data. The
 * check is on the type name alone; the data is what the catalogue validated (and upcast) for that type.
 */
export function eventGuard<const TType extends FleetEventType>(
  types: readonly TType[],
): <E extends EventShape>(event: E) => event is E & EventOf<TType> {
  const known: ReadonlySet<string> = new Set(types);
  return <E extends EventShape>(event: E): event is E & EventOf<TType> => known.has(event.type);
}

/** A guard for the events a list of definitions describes (one saga stream's, say). */
export function definedEventGuard<const Definitions extends readonly EventDefinition[]>(
  definitions: Definitions,
): <E extends EventShape>(event: E) => event is E & EventsOf<Definitions> {
  const known: ReadonlySet<string> = new Set(definitions.map((definition) => definition.type));
  return <E extends EventShape>(event: E): event is E & EventsOf<Definitions> => known.has(event.type);
}

/** Whether the event's type is one the catalogue defines (every event read from the log is). */
export const isFleetEvent = definedEventGuard(fleetEventDefinitions);
export const isRolloutStreamEvent = definedEventGuard(rolloutStreamEvents);
export const isStepStreamEvent = definedEventGuard(stepStreamEvents);
export const isCapacityStreamEvent = definedEventGuard(capacityStreamEvents);
export const isProvisionStreamEvent = definedEventGuard(provisionStreamEvents);
export const isRotationStreamEvent = definedEventGuard(rotationStreamEvents);
export const isCredentialStepEvent = definedEventGuard(credentialStepEvents);

/** Whether `event` is of the type named (or one of the types named); narrows its data. */
export function isEventOf<E extends EventShape, const TType extends FleetEventType>(event: E, type: TType | readonly TType[]): event is E & EventOf<TType> {
  return typeof type === 'string' ? event.type === type : type.includes(event.type as TType);
}

/**
 * The end of a switch over a closed union: it compiles only when every member has its case, so a type added to the
 * union without a case fails the build. Reached at run time only by a value the types did not foresee.
 */
export function assertNever(value: never, what = 'event'): never {
  const type = typeof value === 'object' && value !== null && 'type' in value ? String((value as { type: unknown }).type) : String(value);
  throw new Error(`unexpected ${what}: ${type}`);
}

/**
 * A string member of an event's payload, for readers that go over events of many types (a history naming the node or
 * the rollout an event is about): undefined when the payload has no such member or it is not a string.
 */
export function payloadString(event: EventShape, key: string): string | undefined {
  const { data } = event;
  if (typeof data !== 'object' || data === null) return undefined;
  const value: unknown = Reflect.get(data, key);
  return typeof value === 'string' ? value : undefined;
}
