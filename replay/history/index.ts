/**
 * An auditor's history of the fleet: one node's timeline (every event about it, its silences as intervals, its
 * alarms) and what changed between two points of the log (nodes, firmware, darkness, drift, alarms, saga steps,
 * intents with who asked). Points are log positions or instants.
 */
export { nodeTimeline, type NodeTimeline, type NodeTimelineOptions, type Silence, type TimelineEntry } from './node-timeline.js';
export { fleetDiff, type DarkSpell, type FleetDiff, type FleetDiffCounts, type FleetDiffOptions, type IntentRecord } from './fleet-diff.js';
export type { AlarmAck, AlarmRecord, AlarmSource } from './alarm-history.js';
export type { DriftChange } from './drift-changes.js';
export type { FirmwareChange } from './firmware-changes.js';
export type { MembershipChange } from './membership-changes.js';
export type { SagaMilestone, StepChange, StepChangeKind } from './saga-changes.js';
export { parsePoint, pointDescription, pointPattern, positionAt, resolveWindow, type LogPoint, type LogWindow, type PointInput } from './log-window.js';
export { HistoryError, historyErrorCatalogue, isHistoryError, type AnyHistoryError, type HistoryErrorCode, type HistoryErrorDetails } from './history-error.js';
// The node indexes are an index on the log, so the ledger owns their migration; history re-exports them for its readers.
export { historyMigrations, nodeIndexesPresent, nodeIndexNames } from '../../src/ledger/index.js';
export { summarizeEvent, shortInstant } from './event-summary.js';
export { FoldStartFinder, replayNodeLiveness, type PositionedFact } from './liveness-replay.js';
