import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  DriverError,
  driverErrorCodes,
  extractRedfishMessages,
  normalizeRedfishError,
  toDriverError,
  type DriverErrorCode,
} from '../../src/drivers/index.js';
import { fixturePath, readFixture, fixtures } from './support/fixtures.js';

interface ErrorCapture {
  _source: { http_status: number | string; request?: string };
  body?: unknown;
  raw_text?: string;
}

/** What each verbatim body must become, decided by reading it. */
const expected: Record<string, { code: DriverErrorCode; retryable: boolean; vendorMessageId?: string; phase: 'login' | 'read' }> = {
  'dell-idrac-503-session-limit-RAC0218-IDRAC.2.1.json': { code: 'DRIVER_SESSION_LIMIT', retryable: true, vendorMessageId: 'RAC0218', phase: 'login' },
  'dell-idrac-503-session-limit-RAC0218-IDRAC.2.4.json': { code: 'DRIVER_SESSION_LIMIT', retryable: true, vendorMessageId: 'RAC0218', phase: 'login' },
  'dell-idrac8-405-session-create-not-allowed.json': { code: 'DRIVER_SESSIONS_UNSUPPORTED', retryable: false, phase: 'login' },
  'hpe-ilo5-401-NoValidSession.json': { code: 'DRIVER_SESSION_EXPIRED', retryable: true, vendorMessageId: 'NoValidSession', phase: 'read' },
  'openbmc-bmcweb-property-annotation-ResourceAlreadyExists.json': { code: 'DRIVER_CONFLICT', retryable: false, vendorMessageId: 'ResourceAlreadyExists', phase: 'read' },
};

const files = fixtures.dir === undefined ? [] : readdirSync(fixturePath('redfish-errors')).filter((name) => name.endsWith('.json')).sort();

describe.skipIf(!fixtures.runnable)(fixtures.title('error normalization on every captured BMC error body'), () => {
  it('has an expectation for every file in redfish-errors/', () => {
    expect(Object.keys(expected).sort()).toEqual(files);
  });

  it.each(files)('%s becomes the typed driver error its body means', (file) => {
    const capture = JSON.parse(readFixture('redfish-errors', file)) as ErrorCapture;
    const want = expected[file]!;
    // bmcweb#63 does not show the status; a property-level annotation comes with 400 from bmcweb.
    const status = typeof capture._source.http_status === 'number' ? capture._source.http_status : 400;
    const error = normalizeRedfishError({
      status,
      ...(capture.body !== undefined ? { bodyText: JSON.stringify(capture.body) } : {}),
      method: 'POST',
      url: '/redfish/v1/SessionService/Sessions',
      phase: want.phase,
    });
    expect(error).toBeInstanceOf(DriverError);
    expect(error.code).toBe(want.code);
    expect(error.retryable).toBe(want.retryable);
    expect(error.details.status).toBe(status);
    expect(error.details.vendorMessageId).toBe(want.vendorMessageId);
  });

  it('reads ExtendedInfo given as a single object and MessageSeverity instead of Severity', () => {
    const error = normalizeRedfishError({
      status: 503,
      body: { error: { code: 'Base.1.5.GeneralError', '@Message.ExtendedInfo': { MessageId: 'IDRAC.2.4.RAC0218', Message: 'The maximum number of user sessions is reached.', MessageSeverity: 'Warning' } } },
      phase: 'login',
    });
    expect(error.code).toBe('DRIVER_SESSION_LIMIT');
    expect(error.details.messages?.[0]).toMatchObject({ messageId: 'IDRAC.2.4.RAC0218', severity: 'Warning' });
  });

  it('maps PasswordChangeRequired before the status, whatever the status', () => {
    const body = { error: { code: 'Base.1.8.GeneralError', '@Message.ExtendedInfo': [{ MessageId: 'Base.1.8.PasswordChangeRequired', Severity: 'Critical' }] } };
    for (const status of [200, 401, 403]) {
      const error = normalizeRedfishError({ status, body, phase: 'login' });
      expect(error.code).toBe('DRIVER_PASSWORD_CHANGE_REQUIRED');
      expect(error.retryable).toBe(false);
    }
  });

  it.each([
    [401, 'login', 'DRIVER_AUTH'],
    [403, 'read', 'DRIVER_AUTH'],
    [404, 'read', 'DRIVER_NOT_FOUND'],
    [405, 'read', 'DRIVER_REJECTED'],
    [429, 'read', 'DRIVER_RATE_LIMITED'],
    [500, 'read', 'DRIVER_BMC_UNAVAILABLE'],
    [504, 'read', 'DRIVER_TIMEOUT'],
  ] as const)('status %i during %s without a useful body is %s', (status, phase, code) => {
    for (const bodyText of [undefined, '', 'not json', '{"error":null}', '[1,2]', '<html>busy</html>']) {
      expect(normalizeRedfishError({ status, phase, ...(bodyText !== undefined ? { bodyText } : {}) }).code).toBe(code);
    }
  });

  it('turns network failures and certificate errors into typed errors', () => {
    expect(toDriverError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })).code).toBe('DRIVER_UNREACHABLE');
    expect(toDriverError(Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' })).code).toBe('DRIVER_TLS');
    expect(toDriverError(Object.assign(new Error('timeout'), { name: 'TimeoutError' })).code).toBe('DRIVER_TIMEOUT');
    expect(toDriverError('a string').code).toBe('DRIVER_PROTOCOL');
    expect(new DriverError('DRIVER_UNSUPPORTED', 'no reset action').retryable).toBe(false);
  });

  it('documents every error code in src/drivers/README.md', () => {
    const readme = readFileSync(fileURLToPath(new URL('../../src/drivers/README.md', import.meta.url)), 'utf8');
    const documented = new Set([...readme.matchAll(/^\| `(DRIVER_[A-Z_]+)` \|/gm)].map((match) => match[1]));
    expect([...documented].sort()).toEqual([...driverErrorCodes].sort());
  });
});

/** The second set of captured error bodies (`redfish-errors-more/`), read the same way. */
const expectedMore: Record<string, { code: DriverErrorCode; retryable: boolean; vendorMessageId: string; status: number; useRawText?: boolean }> = {
  // "No sufficient Privileges" in a Base.1.0.InternalError, with a 400: the account's role, not a bad request.
  'dell-idrac8-400-InternalError-insufficient-privileges.json': { code: 'DRIVER_AUTH', retryable: false, vendorMessageId: 'InternalError', status: 400 },
  // Two JSON values in one body (the error, then the resource): the first is read; the feature is unlicensed.
  'dell-idrac8-expand-license-error-concatenated-with-resource.json': { code: 'DRIVER_UNSUPPORTED', retryable: false, vendorMessageId: 'InternalError', status: 400, useRawText: true },
  // Base.InternalError and iDRAC.1.6.RAC964 ("wait and retry"): the vendor's id is the one named.
  'dell-idrac9-500-firmware-image-download-RAC964.json': { code: 'DRIVER_BMC_UNAVAILABLE', retryable: true, vendorMessageId: 'RAC964', status: 500 },
  // The legacy `Messages[].MessageID` envelope beside a Redfish error whose ExtendedInfo also says MessageID.
  'hpe-ilo-400-InvalidOperationForSystemState-legacy-Messages.json': { code: 'DRIVER_CONFLICT', retryable: false, vendorMessageId: 'InvalidOperationForSystemState', status: 400 },
  // "Not ready, retry" sent as a 400: a busy BMC, retried later, not a rejected request.
  'hpe-ilo5-400-ResourceNotReadyRetry.json': { code: 'DRIVER_BMC_UNAVAILABLE', retryable: true, vendorMessageId: 'ResourceNotReadyRetry', status: 400 },
};
const moreFiles = fixtures.dir === undefined ? [] : readdirSync(fixturePath('redfish-errors-more')).filter((name) => name.endsWith('.json')).sort();

describe.skipIf(!fixtures.runnable)(fixtures.title('error normalization on the older and odder captured bodies'), () => {
  it('has an expectation for every error in redfish-errors-more/ (the one 200 is read as a message, below)', () => {
    expect([...Object.keys(expectedMore), 'hpe-ilo-200-Success-in-legacy-error-envelope.json'].sort()).toEqual(moreFiles);
  });

  it.each(Object.keys(expectedMore))('%s becomes the typed driver error its body means', (file) => {
    const capture = JSON.parse(readFixture('redfish-errors-more', file)) as ErrorCapture;
    const want = expectedMore[file]!;
    const bodyText = want.useRawText ? capture.raw_text! : JSON.stringify(capture.body);
    if (want.useRawText) expect(() => JSON.parse(bodyText)).toThrow(); // the capture really is two values
    const error = normalizeRedfishError({ status: want.status, bodyText, method: 'GET', url: '/redfish/v1/Managers/1', phase: 'read' });
    expect(error).toMatchObject({ code: want.code, retryable: want.retryable });
    expect(error.details.vendorMessageId).toBe(want.vendorMessageId);
  });

  it('a body carrying one message in both the legacy and the Redfish envelope yields it once', () => {
    const capture = JSON.parse(readFixture('redfish-errors-more', 'hpe-ilo-200-Success-in-legacy-error-envelope.json')) as ErrorCapture;
    const ids = extractRedfishMessages(capture.body).map((message) => message.messageId);
    expect(ids).toEqual(['Base.0.10.Success', 'iLO.0.10.ExtendedInfo']);
  });
});

describe('legacy message shapes, written from the Redfish specification (no capture holds them)', () => {
  it('a session limit in the legacy Messages envelope with a colon-separated id is DRIVER_SESSION_LIMIT', () => {
    const error = normalizeRedfishError({ status: 503, body: { Messages: [{ MessageID: 'Base.1.0:SessionLimitExceeded' }], Type: 'ExtendedError.1.0.0' }, phase: 'login' });
    expect(error).toMatchObject({ code: 'DRIVER_SESSION_LIMIT', retryable: true });
    expect(error.details.vendorMessageId).toBe('SessionLimitExceeded');
  });

  it('a colon-separated id is keyed by its last part (Base.1.0:PropertyNotWritable -> PropertyNotWritable)', () => {
    const error = normalizeRedfishError({ status: 400, body: { error: { '@Message.ExtendedInfo': [{ MessageId: 'Base.1.0:PropertyNotWritable' }] } } });
    expect(error.details.vendorMessageId).toBe('PropertyNotWritable');
    expect(error.code).toBe('DRIVER_REJECTED');
  });
});
