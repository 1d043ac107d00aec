import type { PollOutcomeKind } from '../../events/index.js';
import { isDriverError } from '../drivers/index.js';

/** The outcome an error of a visit is recorded as. Anything untyped is a protocol error, never a crash. */
export function outcomeOfError(error: unknown): PollOutcomeKind {
  if (!isDriverError(error)) return 'protocol';
  switch (error.code) {
    case 'DRIVER_TIMEOUT':
      return 'timeout';
    case 'DRIVER_SESSION_LIMIT':
    case 'DRIVER_RATE_LIMITED':
      return 'session-limit';
    case 'DRIVER_AUTH':
    case 'DRIVER_PASSWORD_CHANGE_REQUIRED':
      return 'auth';
    case 'DRIVER_UNREACHABLE':
    case 'DRIVER_BMC_UNAVAILABLE':
    case 'DRIVER_TLS':
    case 'DRIVER_TLS_VERSION':
    case 'DRIVER_CERTIFICATE_CHANGED':
    case 'DRIVER_CERTIFICATE_UNTRUSTED':
      return 'refused';
    default:
      return 'protocol';
  }
}

/** Errors worth a retry within the same visit: transient, and not a sign that the BMC is overloaded. */
export function retryWithinVisit(error: unknown): boolean {
  if (!isDriverError(error) || !error.retryable) return false;
  return error.code !== 'DRIVER_SESSION_LIMIT' && error.code !== 'DRIVER_RATE_LIMITED' && error.code !== 'DRIVER_TIMEOUT' && error.code !== 'DRIVER_BMC_UNAVAILABLE';
}

/** Errors that latch the target: repeated bad logins lock real BMCs out. */
export function latchesCredentials(error: unknown): boolean {
  return isDriverError(error) && (error.code === 'DRIVER_AUTH' || error.code === 'DRIVER_PASSWORD_CHANGE_REQUIRED');
}
