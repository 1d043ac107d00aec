/** The KurrentDB (EventStoreDB) gRPC face of the ledger: the official clients read, subscribe and append. */
export { serveKurrent, kurrentCompatibleVersion, type KurrentServer, type KurrentServerOptions } from './kurrent-server.js';
export { KurrentCallError } from './kurrent-error.js';
