/**
 * The simulator-wide behaviour knobs, all in simulated milliseconds (see `SimClock`), with the defaults used when a
 * scenario or the caller leaves them out.
 */
export interface SimBehaviour {
  /** How long a BMC may be kept over its session limit (rejecting) before it stops answering and resets. */
  overloadAfterMs: number;
  /** How long a reset BMC stays dark (also used after a firmware update of the BMC itself). */
  resetDarkMs: number;
  /** Idle timeout of a Redfish session; undefined uses the capture's `SessionService.SessionTimeout`. */
  sessionIdleTimeoutMs: number | undefined;
  /** Consecutive bad logins that lock the account out. */
  lockoutThreshold: number;
  lockoutMs: number;
  /** How long an update task runs before it completes or fails; undefined uses the vendor's own time. */
  firmwareUpdateMs: number | undefined;
  /** Share of firmware updates that fail on their own (beyond failures injected as faults). */
  firmwareFailureRate: number;
  /** Failure rate per image: the first key contained in the image URI (or pushed file name) applies. */
  imageFailureRates: Record<string, number> | undefined;
  /** What a dark BMC does with a request: hold it unanswered until the client gives up, or drop the connection. */
  darkMode: 'hang' | 'refuse';
  /** Multiplies every modelled response time; 0 answers at once. */
  latencyScale: number;
  /**
   * Heartbeats on every event stream, this often. No captured controller advertises them, so none by default; a
   * test or the push bench gives them to see what a fleet that has them gains (`docs/push.md`).
   */
  eventHeartbeatMs: number | undefined;
}

export const DEFAULT_BEHAVIOUR: SimBehaviour = {
  overloadAfterMs: 60_000,
  resetDarkMs: 90_000,
  sessionIdleTimeoutMs: undefined,
  lockoutThreshold: 5,
  lockoutMs: 300_000,
  firmwareUpdateMs: undefined,
  firmwareFailureRate: 0,
  imageFailureRates: undefined,
  darkMode: 'hang',
  latencyScale: 1,
  eventHeartbeatMs: undefined,
};
