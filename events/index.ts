/**
 * The event catalogue: the envelope, every event family, and the catalogue that validates and upcasts.
 * Pure: nothing here imports I/O.
 */
import { EventCatalogue } from './catalogue.js';
import { fleetEventDefinitions } from './fleet-event.js';

export * from './envelope.js';
export * from './define-event.js';
export * from './catalogue.js';
export * from './common.js';
export * from './uuid-v7.js';
export * from './poll-outcomes.js';
export * from './push.js';
export * from './operator-intents.js';
export * from './liveness.js';
export * from './bmc-certificates.js';
export * from './saga-progress.js';
export * from './credential-rotation.js';
export * from './driver-observations.js';
export * from './system.js';
export * from './application-events.js';
export * from './fleet-event.js';

/** Every event type fleet-ledger knows, in one catalogue. */
export const fleetCatalogue = new EventCatalogue(fleetEventDefinitions);
