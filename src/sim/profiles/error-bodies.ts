/**
 * Error answers as each vendor shapes them, written from the message registries and the answers operators have
 * reported from real controllers. Where no real answer is on record, the DMTF Base registry's own message is used
 * and the reply says so in `source`.
 */
import type { ErrorReply } from '../vendor-profile.ts';

/** DMTF Base registry `SessionLimitExceeded` in the standard error envelope: 503. */
export function standardSessionLimit(registry = 'Base.1.8'): ErrorReply {
  const message = 'The session establishment failed due to the number of simultaneous sessions exceeding the limit of the implementation.';
  return {
    status: 503,
    source: `standard (DMTF ${registry} SessionLimitExceeded; no vendor answer on record)`,
    body: {
      error: {
        code: `${registry}.SessionLimitExceeded`,
        message,
        '@Message.ExtendedInfo': [
          {
            MessageId: `${registry}.SessionLimitExceeded`,
            Message: message,
            Severity: 'Critical',
            Resolution: 'Reduce the number of other sessions before trying to establish the session or increase the limit of simultaneous sessions (if supported).',
          },
        ],
      },
    },
  };
}

/** DMTF Base registry `NoValidSession` inside `GeneralError`: 401. */
export function standardNoValidSession(registry = 'Base.1.8'): ErrorReply {
  return {
    status: 401,
    source: `standard (DMTF ${registry} NoValidSession)`,
    body: {
      error: {
        code: `${registry}.GeneralError`,
        message: 'A general error has occurred. See ExtendedInfo for more information.',
        '@Message.ExtendedInfo': [
          {
            MessageId: `${registry}.NoValidSession`,
            Message: 'There is no valid session established with the implementation.',
            Severity: 'Critical',
            Resolution: 'Establish a session before attempting any operations.',
          },
        ],
      },
    },
  };
}

/**
 * iDRAC's full session table: HTTP 503 (not 429), `Base.<v>.GeneralError` with the iDRAC message RAC0218 in
 * ExtendedInfo. Operators report registry `IDRAC.2.1` (with `Base.1.5`) from older firmware and `IDRAC.2.4` from
 * iDRAC9 7.x.
 */
export function idracSessionLimit(idracRegistry: 'IDRAC.2.1' | 'IDRAC.2.4', baseRegistry: string): ErrorReply {
  return {
    status: 503,
    source: `Dell iDRAC RAC0218 (${idracRegistry}), as operators report it`,
    body: {
      error: {
        code: `${baseRegistry}.GeneralError`,
        message: 'A general error has occurred. See ExtendedInfo for more information',
        '@Message.ExtendedInfo': [
          {
            MessageId: `${idracRegistry}.RAC0218`,
            Message: 'The maximum number of user sessions is reached.',
            MessageArgs: [],
            'MessageArgs@odata.count': 0,
            RelatedProperties: [],
            'RelatedProperties@odata.count': 0,
            Severity: 'Informational',
            Resolution: 'Close one or more sessions before opening another session.',
          },
        ],
      },
    },
  };
}

/**
 * iLO 5's rejection: 401 with an `iLO.0.10.ExtendedInfo` code and a bare MessageId (no Message, no Severity).
 * The only iLO rejection on record, also what a full session table answers: a poller must not latch credentials
 * on it while it has sessions open.
 */
export function iloNoValidSession(): ErrorReply {
  return {
    status: 401,
    source: 'HPE iLO 5 NoValidSession (bare MessageId), as operators report it',
    body: {
      error: {
        code: 'iLO.0.10.ExtendedInfo',
        message: 'See @Message.ExtendedInfo for more information.',
        '@Message.ExtendedInfo': [{ MessageId: 'Base.1.4.NoValidSession' }],
      },
    },
  };
}

/**
 * OpenBMC bmcweb: messages carry `@odata.type` `Message.v1_1_1`; its status for a full session table is not on
 * record, so 503 with the Base registry's SessionLimitExceeded in bmcweb's shape.
 */
export function bmcwebSessionLimit(): ErrorReply {
  const message = 'The session establishment failed due to the number of simultaneous sessions exceeding the limit of the implementation.';
  return {
    status: 503,
    source: 'OpenBMC bmcweb shape; status and message assumed (no answer on record)',
    body: {
      error: {
        code: 'Base.1.13.0.SessionLimitExceeded',
        message,
        '@Message.ExtendedInfo': [
          {
            '@odata.type': '#Message.v1_1_1.Message',
            MessageId: 'Base.1.13.0.SessionLimitExceeded',
            Message: message,
            MessageArgs: [],
            MessageSeverity: 'Critical',
            Resolution: 'Reduce the number of other sessions before trying to establish the session or increase the limit of simultaneous sessions (if supported).',
          },
        ],
      },
    },
  };
}

/** bmcweb's 401 carries no body worth parsing: a plain `Unauthorized`. */
export function bmcwebUnauthorized(): ErrorReply {
  return { status: 401, source: 'OpenBMC bmcweb (plain text Unauthorized, served as JSON error)', body: { error: { code: 'Base.1.13.0.NoValidSession', message: 'Unauthorized' } } };
}
