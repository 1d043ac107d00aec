/**
 * The simulator's error catalogue: each error has a stable code, says whether retrying can help, and carries its
 * data. HTTP statuses for the control API are mapped in one place (`controlStatus`).
 */
export const SIM_ERROR_CODES = [
  'SIM_SCENARIO_INVALID',
  'SIM_SCENARIO_UNREADABLE',
  'SIM_MOCKUP_INVALID',
  'SIM_FAULT_INVALID',
  'SIM_UNKNOWN_TARGET',
  'SIM_ADDRESSING_UNAVAILABLE',
  'SIM_NOT_FOUND',
  'SIM_STATE_INVALID',
  'SIM_INTERNAL',
] as const;

export type SimErrorCode = (typeof SIM_ERROR_CODES)[number];

export class SimError extends Error {
  readonly retryable = false;
  constructor(
    readonly code: SimErrorCode,
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'SimError';
  }
}

/** The HTTP status the control API answers with for each error code. */
export function controlStatus(code: SimErrorCode): number {
  switch (code) {
    case 'SIM_SCENARIO_INVALID':
    case 'SIM_FAULT_INVALID':
    case 'SIM_STATE_INVALID':
      return 400;
    case 'SIM_UNKNOWN_TARGET':
    case 'SIM_NOT_FOUND':
      return 404;
    case 'SIM_SCENARIO_UNREADABLE':
    case 'SIM_MOCKUP_INVALID':
    case 'SIM_ADDRESSING_UNAVAILABLE':
    case 'SIM_INTERNAL':
      return 500;
    default: {
      const unreachable: never = code;
      return unreachable;
    }
  }
}

/** Formats zod issues as `field.path: reason` lines, so a bad scenario or fault names what is wrong. */
export function describeIssues(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  return issues
    .map((issue) => `${issue.path.length ? issue.path.map(String).join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}
