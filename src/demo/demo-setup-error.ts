/** The typed data of each error the demo's setup can end with, by code. */
export interface DemoSetupErrorDetails {
  /** The database kept failing (or timing out) for as long as the setup's retries allow. */
  DEMO_DATABASE_UNAVAILABLE: { operation: string; attempts: number; cause: string };
  /** The log refused what the setup wrote for a reason a retry cannot change. */
  DEMO_REGISTRATION_REFUSED: { operation: string; cause: string };
}

export type DemoSetupErrorCode = keyof DemoSetupErrorDetails;

/**
 * Why the simulated fleet could not be set up: a stable code, its typed data, and a message written for the person
 * who typed `npm start` (what failed, what was tried, what to do), never a stack trace.
 */
export class DemoSetupError<C extends DemoSetupErrorCode = DemoSetupErrorCode> extends Error {
  override readonly name = 'DemoSetupError';
  readonly retryable = false;

  constructor(
    readonly code: C,
    readonly details: DemoSetupErrorDetails[C],
    message: string,
  ) {
    super(message);
  }
}
