/**
 * Every error the API answers, in one shape (`{ error: { code, message, details } }`, a code from one catalogue):
 * our own refusals, the ledger's (its server-side failures worded by the catalogue, the database's words to the log
 * only), validation failures naming the field, fastify's body refusals, PostgreSQL away (retryable, never a 500), and
 * anything else as `API_INTERNAL` with the detail in the log.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { isLedgerError, isStoreUnavailable, ledgerErrorCatalogue } from '../ledger/index.js';
import { ApiError, apiErrorCatalogue, ledgerErrorStatus, type ErrorBody } from './api-error.js';
import { redactUrl } from './auth.js';
import { bodyCaps, capOfLimit } from './body-caps.js';

export function errorBody(code: string, message: string, details: unknown): ErrorBody {
  return { error: { code, message, details } };
}

/** The field a fastify/zod validation error is about, as `body.reason`, `querystring.limit`, `params.nodeId`. */
function validationField(error: FastifyError): { field: string; reason: string; issues: Array<{ field: string; reason: string }> } {
  const context = error.validationContext ?? 'request';
  const issues = (error.validation ?? []).map((issue) => {
    const path = issue.instancePath.replace(/^\//, '').replace(/\//g, '.');
    return { field: path ? `${context}.${path}` : context, reason: issue.message ?? 'is invalid' };
  });
  const first = issues[0] ?? { field: context, reason: error.message };
  return { ...first, issues };
}

/** The error handler of the API (`app.setErrorHandler`). */
export function answerError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof ApiError) return reply.code(error.status).send(errorBody(error.code, error.message, error.details));
  if (isLedgerError(error)) {
    const status = ledgerErrorStatus[error.code];
    if (status >= 500) {
      // The database's own words (hosts, roles, another caller's statement) go to the log; the caller gets the
      // code, its meaning and whether to retry.
      request.log.warn({ code: error.code, details: error.details }, error.message);
      const { cause: _cause, ...details } = error.details as Record<string, unknown>;
      return reply.code(status).send(errorBody(error.code, ledgerErrorCatalogue[error.code].meaning, { ...details, retryable: error.retryable }));
    }
    return reply.code(status).send(errorBody(error.code, error.message, { ...error.details, retryable: error.retryable }));
  }
  if (hasZodFastifySchemaValidationErrors(error) || error.validation) {
    const { field, reason, issues } = validationField(error);
    return reply.code(400).send(errorBody('API_INVALID_REQUEST', `${field} ${reason}`, { field, reason, issues }));
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return reply.code(415).send(errorBody('API_UNSUPPORTED_MEDIA_TYPE', error.message, { contentType: String(request.headers['content-type'] ?? '') }));
    case 'FST_ERR_CTP_BODY_TOO_LARGE': {
      const limitBytes = request.routeOptions.bodyLimit ?? bodyCaps.jsonBodyBytes;
      const cap = capOfLimit(limitBytes);
      return reply.code(413).send(errorBody('API_PAYLOAD_TOO_LARGE', `the body is larger than ${cap} (${limitBytes} bytes)`, { limitBytes, cap }));
    }
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return reply.code(400).send(errorBody('API_INVALID_REQUEST', `body ${error.message}`, { field: 'body', reason: error.message }));
    default:
      break;
  }
  // A read model or a status read straight through pg while PostgreSQL is away: the same retryable answer an append
  // gets, never a 500, so a client backs off and tries again (the database's words go to the log only).
  if (isStoreUnavailable(error)) {
    request.log.warn({ error: error.message, url: redactUrl(request.url) }, 'store unavailable');
    const code = 'LEDGER_STORE_UNAVAILABLE';
    return reply.code(ledgerErrorStatus[code]).send(errorBody(code, ledgerErrorCatalogue[code].meaning, { operation: 'read', retryable: ledgerErrorCatalogue[code].retryable }));
  }
  // A read model that does not exist yet: the projections have not been started on this database.
  if ((error as { code?: string }).code === '42P01') {
    return reply.code(503).send(errorBody('API_NOT_READY', 'the read models are not created yet (projections not started)', { reasons: ['read model missing'] }));
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return reply.code(400).send(errorBody('API_INVALID_REQUEST', error.message, { field: 'request', reason: error.message }));
  }
  request.log.error({ error: error.message, stack: error.stack, url: redactUrl(request.url) }, 'unexpected API failure');
  return reply.code(apiErrorCatalogue.API_INTERNAL.status).send(errorBody('API_INTERNAL', 'internal error', {}));
}
