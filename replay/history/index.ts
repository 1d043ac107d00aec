/** One node's timeline and the changes between two points of the log, for auditors. */
export { fleetDiff, nodeTimeline, summarize, type FleetDiff, type Silence, type Timeline, type TimelineEntry } from './history.js';
