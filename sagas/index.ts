/**
 * Sagas: firmware rollouts as resumable processes, and the deciders of operators' intents (one `Decider` shape,
 * run by one shell, `handleCommand`). Pure planners, deciders and evolvers (`firmware-rollout/`,
 * `capacity/`), and the engine that does the I/O (`engine/`). Design and guarantees: `docs/sagas.md`.
 */
export * from './saga-event.js';
export * from './decider.js';
export * from './node-intents/node-evolve.js';
export * from './node-intents/node-decide.js';
export * from './node-intents/alarm-decide.js';
export * from './capacity/capacity-evolve.js';
export * from './firmware-rollout/rollout-planner.js';
export * from './firmware-rollout/rollout-evolve.js';
export * from './firmware-rollout/rollout-decide.js';
export * from './firmware-rollout/step-evolve.js';
export * from './firmware-rollout/step-decide.js';
export * from './firmware-rollout/permanent-refusal.js';
export * from './firmware-rollout/plan-warnings.js';
export * from './firmware-rollout/rollout-verb-decide.js';
export * from './engine/gate.js';
export * from './engine/handle-command.js';
export * from './engine/rollout-engine.js';
export { driveFirmwareStep, loadStepState, type StepDriverOptions } from './engine/step-driver.js';
export * from './engine/rollout-service.js';
export * from './engine/supervisor.js';
export * from './provisioning/provision-evolve.js';
export * from './provisioning/provision-decide.js';
export * from './provisioning/burn-in-alarms.js';
export * from './provisioning/provision-verb-decide.js';
export * from './engine/provisioning-engine.js';
export { sagaBmcTls } from './engine/bmc-trust.js';
export { SagaOwnership, waitForSagaLease, type SagaLease } from './engine/saga-ownership.js';
export { runWithSagaLease, type SagaLeaseShellOptions } from './engine/saga-lease-shell.js';
export * from './credential-rotation/credential-step-evolve.js';
export * from './credential-rotation/credential-step-decide.js';
export * from './credential-rotation/rotation-planner.js';
export * from './credential-rotation/rotation-evolve.js';
export * from './credential-rotation/rotation-decide.js';
export * from './credential-rotation/rotation-verb-decide.js';
export { RotationEngine, rotationLockKey, type RotationEngineOptions } from './engine/rotation-engine.js';
export { driveCredentialStep, loadCredentialStep, classifyChangeError } from './engine/credential-step-driver.js';
export * from './engine/rotation-service.js';
