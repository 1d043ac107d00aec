/**
 * The contract every projection implements is the ledger's (`src/ledger/projection.ts`): the projection runner
 * executes it, so it lives beside the runner and the ledger depends on no projection. Re-exported here for the
 * projections' own files.
 */
export { ProjectionApplyError } from '../src/ledger/index.js';
export type { Projection } from '../src/ledger/index.js';
