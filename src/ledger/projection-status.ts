/** What a projection runner reports of each projection: its state, position, lag, and the failure that stopped it. */
export interface ProjectionStatus {
  name: string;
  version: number;
  state: 'starting' | 'standby' | 'running' | 'failed' | 'rebuilding' | 'stopped';
  position: number;
  headPosition: number;
  lagPositions: number;
  /** Seconds between the head's recorded time and the recorded time of the last applied event (0 when caught up). */
  lagSeconds: number;
  error: ProjectionFailure | null;
  /** Events this projection set aside (could not apply) since its last rebuild; see `projection_dead_letters`. */
  setAside: number;
}

/** What health and metrics read of running projections: a `ProjectionRunner`, or one on a thread of its own. */
export interface ProjectionStatusSource {
  status(): Promise<ProjectionStatus[]>;
}

export interface ProjectionFailure {
  position: number;
  eventId: string;
  type: string;
  stream: string;
  reason: string;
  /** False when no single event could be named (the batch failed but every prefix applied): never set aside. */
  located?: boolean;
}

export interface RebuildProgress {
  name: string;
  position: number;
  target: number;
}

export interface RebuildResult {
  position: number;
  events: number;
  seconds: number;
  /** Views on the projection's tables (analysts' own), made again on the rebuilt tables with their owner and grants. */
  viewsRestored: string[];
  /** Views that no longer fit the rebuilt tables (a column gone, say): named with the database's reason. */
  viewsLost: Array<{ view: string; reason: string }>;
}
