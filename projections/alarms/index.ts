export { AlarmsProjection, alarmsEventTypes, type AlarmsOptions } from './alarms-projection.js';
export * from './alarms-queries.js';
