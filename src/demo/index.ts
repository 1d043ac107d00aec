/** The demo fleet `start` runs by default: simulated BMCs registered and declared, or a target file of real ones. */
export { declareDemoEbom } from './demo-ebom.js';
export { demoMinimumBmcs, demoScenario } from './demo-scenario.js';
export { CredentialFileError, fileCredentials, loadTargetFile, registerTargets, targetFileSchema, type TargetFile } from './target-file.js';
export { registerSimulatedFleet, simulatorCredentials, startSimulatedFleet } from './demo-fleet.js';
export { readRecordedFleet } from './recorded-fleet.js';
export { keepSimulatorState, simulatorStateFileName, type SimulatorStateKeeper } from './simulator-state-file.js';
export { credentialInForce, demoCredentialStore, demoCredentialsFileName, followCredentialsInForce } from './demo-credentials.js';
