/**
 * Turns a Redfish error answer into a `DriverError`, whatever shape the body has.
 *
 * Real bodies differ (the captured answers in `$FLEET_LEDGER_FIXTURES/redfish-errors/`): `@Message.ExtendedInfo` as an array or a single
 * object, `Severity` or `MessageSeverity`, only a `MessageId` (iLO 5), messages attached to a property
 * (`UserName@Message.ExtendedInfo`, bmcweb) with no top-level `error`, or no body at all (iDRAC 8's 405).
 * The code is decided from the message ids first and the HTTP status second, because an iDRAC that is out of
 * sessions answers 503 `Base.GeneralError` with the real reason (RAC0218) only in ExtendedInfo.
 */
import { DriverError, type DriverErrorCode, type DriverErrorDetails } from '../driver-error.js';
import { storableText, storableValue } from '../storable-text.js';

export type RedfishRequestPhase = 'login' | 'read' | 'logout';

type Message = NonNullable<DriverErrorDetails['messages']>[number];

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function messagesOf(value: unknown, property: string | undefined, into: Message[]): void {
  const list = Array.isArray(value) ? value : [value];
  for (const item of list) {
    const record = asRecord(item);
    if (!record) continue;
    const message: Message = {};
    // `MessageID` (capital D) is the legacy spelling (iLO 4-era envelopes, pre-1.0 Redfish).
    const messageId = str(record.MessageId) ?? str(record.MessageID);
    const text = str(record.Message);
    const severity = str(record.Severity) ?? str(record.MessageSeverity);
    if (messageId) message.messageId = messageId;
    if (text) message.message = text.slice(0, 1000);
    if (severity) message.severity = severity;
    if (property) message.property = property;
    if (messageId || text) into.push(message);
  }
}

/** Every message a Redfish error body carries: top-level `error`, its ExtendedInfo, and property annotations. */
export function extractRedfishMessages(body: unknown): Message[] {
  const messages: Message[] = [];
  const root = asRecord(body);
  if (!root) return messages;
  const error = asRecord(root.error);
  if (error) {
    messagesOf(error['@Message.ExtendedInfo'], undefined, messages);
    const code = str(error.code);
    const text = str(error.message);
    if (code || text) messages.push({ ...(code ? { messageId: code } : {}), ...(text ? { message: text.slice(0, 1000) } : {}) });
  }
  for (const [key, value] of Object.entries(root)) {
    if (key === '@Message.ExtendedInfo') messagesOf(value, undefined, messages);
    else if (key.endsWith('@Message.ExtendedInfo')) messagesOf(value, key.slice(0, -'@Message.ExtendedInfo'.length), messages);
  }
  // The legacy envelope (`{"Messages": [{"MessageID": ...}], "Type": "ExtendedError.1.0.0"}`), alone or beside `error`.
  messagesOf(root.Messages, undefined, messages);
  // The same message often comes twice (legacy and Redfish envelopes in one body): kept once.
  const seen = new Set<string>();
  return messages.filter((message) => {
    const key = `${message.messageId ?? ''}\u0000${message.message ?? ''}\u0000${message.property ?? ''}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The first JSON value of a body that holds more (an iDRAC 8 answers an unlicensed `$expand` with an error document
 * immediately followed by the resource itself), or undefined when the text does not begin with one.
 */
export function firstJsonValue(text: string): unknown {
  const start = text.search(/\S/);
  if (start < 0 || (text[start] !== '{' && text[start] !== '[')) return undefined;
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth += 1;
    else if (char === '}' || char === ']') {
      depth -= 1;
      if (depth === 0) {
        try {
          return JSON.parse(text.slice(start, index + 1)) as unknown;
        } catch {
          return undefined;
        }
      }
    }
  }
  return undefined;
}

/**
 * `IDRAC.2.4.RAC0218` -> `RAC0218`; `Base.1.4.0.ResourceAlreadyExists` -> `ResourceAlreadyExists`; the early
 * colon form `Base.1.0:PropertyNotWritable` -> `PropertyNotWritable`.
 */
export function messageKey(messageId: string): string {
  const parts = messageId.split(/[.:]/);
  return parts[parts.length - 1] || messageId;
}

const SESSION_LIMIT_KEYS = new Set(['RAC0218', 'SessionLimitExceeded', 'MaximumSessionsReached']);

function codeFromMessages(keys: string[], texts: string[], phase: RedfishRequestPhase): DriverErrorCode | undefined {
  if (keys.some((key) => SESSION_LIMIT_KEYS.has(key)) || texts.some((text) => /maximum number of (user )?sessions/i.test(text))) {
    return 'DRIVER_SESSION_LIMIT';
  }
  if (keys.includes('PasswordChangeRequired')) return 'DRIVER_PASSWORD_CHANGE_REQUIRED';
  if (keys.includes('NoValidSession')) return phase === 'login' ? 'DRIVER_AUTH' : 'DRIVER_SESSION_EXPIRED';
  if (keys.includes('InsufficientPrivilege') || keys.includes('AccessDenied')) return 'DRIVER_AUTH';
  if (texts.some((text) => /no sufficient privileges|insufficient privilege/i.test(text))) return 'DRIVER_AUTH';
  if (keys.includes('ResourceAlreadyExists') || keys.includes('ResourceInUse') || keys.includes('InvalidOperationForSystemState')) return 'DRIVER_CONFLICT';
  // iLO says "not ready, retry" with a 400: a busy BMC, not a bad request.
  if (keys.includes('ResourceNotReadyRetry') || keys.includes('ServiceTemporarilyUnavailable')) return 'DRIVER_BMC_UNAVAILABLE';
  if (texts.some((text) => /no sufficient licen[cs]e|licen[cs]e (is )?required/i.test(text))) return 'DRIVER_UNSUPPORTED';
  return undefined;
}

function codeFromStatus(status: number, phase: RedfishRequestPhase): DriverErrorCode {
  if (status === 401) return phase === 'login' ? 'DRIVER_AUTH' : 'DRIVER_SESSION_EXPIRED';
  if (status === 403) return 'DRIVER_AUTH';
  if (status === 404) return 'DRIVER_NOT_FOUND';
  if (phase === 'login' && (status === 405 || status === 501)) return 'DRIVER_SESSIONS_UNSUPPORTED';
  if (status === 408 || status === 504) return 'DRIVER_TIMEOUT';
  if (status === 409) return 'DRIVER_CONFLICT';
  if (status === 429) return 'DRIVER_RATE_LIMITED';
  if (status >= 500) return 'DRIVER_BMC_UNAVAILABLE';
  if (status >= 400) return 'DRIVER_REJECTED';
  return 'DRIVER_PROTOCOL';
}

/**
 * The `DriverError` for one non-success Redfish answer. `bodyText` may be anything, including invalid JSON or
 * nothing at all; it is never trusted to have a shape.
 */
export function normalizeRedfishError(input: {
  status: number;
  bodyText?: string;
  body?: unknown;
  method?: string;
  url?: string;
  phase?: RedfishRequestPhase;
}): DriverError {
  const phase = input.phase ?? 'read';
  // A body is the BMC's text: kept as text the ledger can store, since errors are recorded with poll outcomes.
  const bodyText = input.bodyText === undefined ? undefined : storableText(input.bodyText);
  let body = storableValue(input.body);
  if (body === undefined && bodyText) {
    try {
      body = storableValue(JSON.parse(bodyText));
    } catch {
      body = storableValue(firstJsonValue(bodyText));
    }
  }
  const messages = extractRedfishMessages(body);
  const ids = messages.map((message) => message.messageId).filter((id): id is string => id !== undefined);
  const keys = ids.map(messageKey);
  const texts = messages.map((message) => message.message ?? '');
  const code = codeFromMessages(keys, texts, phase) ?? codeFromStatus(input.status, phase);
  // The most specific id: a vendor registry's (RAC0218, RAC964) before Base's, and anything before the generic
  // GeneralError / ExtendedInfo wrappers.
  const wrapper = (id: string) => /[.:]GeneralError$|ExtendedInfo$/.test(id);
  const specific = ids.find((id) => !wrapper(id) && !/^Base[.:]/i.test(id)) ?? ids.find((id) => !wrapper(id)) ?? ids[0];
  const details: DriverErrorDetails = { status: input.status, messages };
  if (input.method) details.method = input.method;
  if (input.url) details.url = input.url;
  if (specific) {
    details.messageId = specific;
    details.vendorMessageId = messageKey(specific);
  }
  const firstText = messages.find((message) => message.message && message.messageId === specific)?.message ?? messages.find((m) => m.message)?.message;
  const summary = firstText ? `: ${firstText}` : bodyText && !body ? `: ${bodyText.slice(0, 200)}` : '';
  return new DriverError(code, `${input.method ?? 'GET'} ${input.url ?? ''} answered ${input.status}${summary}`.replace('  ', ' '), details);
}
