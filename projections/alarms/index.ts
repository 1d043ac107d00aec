export { AlarmsProjection, type AlarmsOptions } from './alarms-projection.js';
export { alarmsEventTypes } from './alarms-event-types.js';
export * from './alarms-queries.js';
