/** The transparency log of the ledger: Merkle tiles, signed checkpoints, proofs, exports and their offline check. */
export { AuditService, type AuditServiceOptions, type AuditStatus } from './audit-service.js';
export { Checkpointer, checkpointText, loadOrCreateSigner, openCheckpoint, type Checkpoint, type SignerFile } from './checkpointer.js';
export { AuditError, consistencyProof, inclusionProof, MerkleFollower, readMerkleState, recordedLeaves, rootAt } from './merkle-store.js';
export { exportLines, exportMagic, type ExportHeader } from './export.js';
export { verifyExport, type VerifyOptions, type VerifyReport } from './verify-export.js';
export { verifyFleetExport, type FleetVerifyReport } from './verify-fleet-export.js';
export { tilePath, tilesOfTree } from './tiles.js';
export { describeFinding, judgeLog, LogIntegrityMonitor, type IntegrityAlarm, type IntegrityCode, type IntegrityFinding } from './log-integrity.js';
export { inSnapshot, readLogFacts, type LogFacts } from './log-snapshot.js';
