/** The HTTP API: intents in, queries out, the log and its live feed, metrics and the dashboard. */
export { buildApi, type ApiOptions } from './build-api.js';
export { serveApi, type ServeApiOptions, type ServedApi } from './serve.js';
export { ApiError, apiErrorCatalogue, ledgerErrorStatus, documentedErrorCodes, type ApiErrorCode, type ErrorBody } from './api-error.js';
export { TokenTable, agentMayReportFor, apiTokens, demoTokenListing, generateDemoTokens, parseTokensEnv, principalIdSchema, readTokensFile, tokensFromEnvironment, roles, type Principal, type Role, type DemoTokens, type TokenEntry } from './tokens.js';
export { checkStrictJson, describeStrictJsonProblem, type StrictJsonProblem, type StrictJsonVerdict } from './strict-json.js';
export { intentRoles, queryRoles, type ZodApp } from './api-context.js';
export { agentObservationTypes, observationTypes, operatorIntentTypes } from './append-permission.js';
export { forwardedPrincipal, onBehalfOfHeader } from './forwarded-principal.js';
export {
  alarmStream,
  appendActor,
  operatorActor,
  appendRefusal,
  derivedIntentStream,
  logView,
  readVerdict,
  readsReadModels,
  rolesReadingReadModels,
  reservedStreamOwner,
  rolesWithView,
  writerRefusal,
  writerRoles,
  type AnonymousReads,
  type AppendQuestion,
  type AuthorizationCode,
  type AuthorizationRefusal,
  type LogView,
  type ReadVerdict,
} from './authorization-policy.js';
export { ReadReplica, lsnBytes, type ReadOrigin, type ReadReplicaOptions, type ReplicaLag, type ReplicaStatus } from './read-replica.js';
