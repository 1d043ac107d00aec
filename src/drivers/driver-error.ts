/**
 * The one error type drivers throw. Every failure a driver can meet (a refused login, a BMC out of sessions, a
 * body that is not JSON, a deadline) ends up as a `DriverError` with a stable `code`, a `retryable` verdict the
 * scheduler can act on, and the data that explains it. Nothing else escapes a driver's public methods.
 *
 * The catalogue below is the single source of truth; `src/drivers/README.md` documents every code (a test keeps
 * the two in step).
 */
import type { CertificateSummary } from '../../events/index.js';
import { storableText, storableValue } from './storable-text.js';
export const driverErrorCatalogue = {
  DRIVER_SESSION_LIMIT: { retryable: true, meaning: 'the BMC refused a new session because its session table is full' },
  DRIVER_SESSION_EXPIRED: { retryable: true, meaning: 'the BMC no longer knows the session token (NoValidSession)' },
  DRIVER_SESSIONS_UNSUPPORTED: { retryable: false, meaning: 'the BMC refuses session creation; basic auth is used instead' },
  DRIVER_AUTH: { retryable: false, meaning: 'credentials were refused; do not retry until they change (BMCs lock out)' },
  DRIVER_PASSWORD_CHANGE_REQUIRED: { retryable: false, meaning: 'the account must change its password before any read' },
  DRIVER_TIMEOUT: { retryable: true, meaning: 'a request passed its deadline' },
  DRIVER_UNREACHABLE: { retryable: true, meaning: 'the connection was refused, reset or could not be made' },
  DRIVER_TLS: { retryable: false, meaning: 'the TLS handshake failed (self-signed certificate and not configured insecure)' },
  DRIVER_TLS_VERSION: { retryable: false, meaning: 'the BMC speaks no TLS version the site policy allows (an old generation that stops at TLS 1.2, a site that requires 1.3)' },
  DRIVER_CERTIFICATE_CHANGED: { retryable: false, meaning: 'the BMC presented a certificate other than the one pinned for it: no credential was sent; an operator must accept the new one' },
  DRIVER_CERTIFICATE_UNTRUSTED: { retryable: false, meaning: 'the BMC presented a certificate the site CA did not sign, or for another name: no credential was sent' },
  DRIVER_RATE_LIMITED: { retryable: true, meaning: 'the BMC asked us to slow down (429)' },
  DRIVER_BMC_UNAVAILABLE: { retryable: true, meaning: 'the BMC answered 5xx for another reason (busy, restarting)' },
  DRIVER_NOT_FOUND: { retryable: false, meaning: 'the resource does not exist on this BMC' },
  DRIVER_UPDATE_BUSY: { retryable: true, meaning: 'the BMC is already running an update (one at a time; HttpPushUriTargetsBusy)' },
  DRIVER_CONFLICT: { retryable: false, meaning: 'the BMC reports the request conflicts with existing state' },
  DRIVER_REJECTED: { retryable: false, meaning: 'the BMC rejected the request (4xx not covered by another code)' },
  DRIVER_REDIRECT_REFUSED: { retryable: false, meaning: 'the BMC redirected a request where the driver does not follow: another host, https to http, a loop, too many hops, or a request other than a read' },
  DRIVER_PROTOCOL: { retryable: false, meaning: 'the answer could not be interpreted (invalid JSON, wrong type, missing root)' },
  DRIVER_UNSUPPORTED: { retryable: false, meaning: 'the driver or device does not support the requested capability' },
  DRIVER_TOOL_MISSING: { retryable: false, meaning: 'an external tool the driver needs (ipmitool, nvidia-smi) is not installed' },
  DRIVER_COMMAND_FAILED: { retryable: true, meaning: 'an external tool exited with an error' },
  DRIVER_NO_DEVICE: { retryable: false, meaning: 'the device the driver reads is absent (no GPU on this machine)' },
  DRIVER_FENCED: { retryable: false, meaning: "the caller's right to talk to the device ended (its poll lease was lost): no further request was sent" },
} as const satisfies Record<string, { retryable: boolean; meaning: string }>;

/** Every driver error code. A `switch (error.code)` over this union can be checked for completeness. */
export type DriverErrorCode = keyof typeof driverErrorCatalogue;

export const driverErrorCodes = Object.keys(driverErrorCatalogue) as DriverErrorCode[];

/** The data an error carries. All optional: an IPMI failure has no URL, a timeout has no status. */
export interface DriverErrorDetails {
  /** HTTP status, when the failure was an HTTP answer. */
  status?: number;
  /** Request method and URL (never with credentials). */
  method?: string;
  url?: string;
  /** Full Redfish MessageId (`IDRAC.2.4.RAC0218`) and its vendor-specific last segment (`RAC0218`). */
  messageId?: string;
  vendorMessageId?: string;
  /** Every message the body carried, whatever shape it had. */
  messages?: Array<{ messageId?: string; message?: string; severity?: string; property?: string }>;
  /** Where a redirect led (its `Location`), when one was refused. */
  location?: string;
  /** Deadline that was exceeded, in milliseconds. */
  deadlineMs?: number;
  /** External command, exit code and the start of its stderr. */
  command?: string;
  exitCode?: number | null;
  stderr?: string;
  /** The underlying cause's name and message, when it was not already a driver error. */
  cause?: string;
  /** The certificate a BMC presented (public facts only), and the fingerprint pinned for it. */
  certificate?: CertificateSummary;
  pinnedFingerprint?: string;
  /** The oldest TLS version the site allowed. */
  minTlsVersion?: string;
}

/**
 * A failure met by a driver. `retryable` comes from the catalogue, so one code never means both.
 * Subclassing is not needed: the code is the type tag.
 */
export class DriverError extends Error {
  override readonly name = 'DriverError';
  readonly code: DriverErrorCode;
  readonly retryable: boolean;
  readonly details: DriverErrorDetails;

  constructor(code: DriverErrorCode, message: string, details: DriverErrorDetails = {}) {
    // Messages and details quote what devices sent, sometimes cut short (which can split a surrogate pair): they
    // are kept storable, since sagas and alarms record them.
    super(storableText(message));
    this.code = code;
    this.retryable = driverErrorCatalogue[code].retryable;
    this.details = storableValue(details);
  }

  toJSON(): { code: DriverErrorCode; retryable: boolean; message: string; details: DriverErrorDetails } {
    return { code: this.code, retryable: this.retryable, message: this.message, details: this.details };
  }
}

export function isDriverError(value: unknown): value is DriverError {
  return value instanceof DriverError;
}

/**
 * Wraps anything thrown into a `DriverError`, so that no untyped exception leaves a driver. Errors that are already
 * driver errors pass through unchanged; Node network errors keep their meaning.
 */
export function toDriverError(error: unknown, context: DriverErrorDetails = {}): DriverError {
  if (error instanceof DriverError) return error;
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const causeCode = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  const anyCode = typeof code === 'string' ? code : typeof causeCode === 'string' ? causeCode : '';
  const details = { ...context, cause: `${name}: ${message}`.slice(0, 500) };
  if (name === 'TimeoutError' || anyCode === 'UND_ERR_HEADERS_TIMEOUT' || anyCode === 'UND_ERR_BODY_TIMEOUT' || anyCode === 'UND_ERR_CONNECT_TIMEOUT') {
    return new DriverError('DRIVER_TIMEOUT', `request timed out${context.url ? ` (${context.url})` : ''}`, details);
  }
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|SSL/i.test(anyCode) || /self[- ]signed certificate/i.test(message)) {
    return new DriverError('DRIVER_TLS', `TLS handshake failed: ${message}`, details);
  }
  if (['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'EAI_AGAIN'].includes(anyCode)) {
    return new DriverError('DRIVER_UNREACHABLE', `cannot reach the device: ${message}`, details);
  }
  if (name === 'AbortError') {
    return new DriverError('DRIVER_TIMEOUT', 'request aborted before completion', details);
  }
  return new DriverError('DRIVER_PROTOCOL', `unexpected failure: ${message}`, details);
}
