/**
 * The fleet simulator's public surface: start a simulated fleet of BMCs generated from vendor profiles (or served
 * from real captures), load and validate scenarios, and the types a poller, a benchmark or a test needs to drive it.
 */
export { startSimulator } from './simulator.ts';
export type { CaptureSummary, FirmwareCatalogueEntry, SimBmcInfo, Simulator, SimulatorOptions } from './simulator.ts';
export { loadScenario, parseScenario, scenarioSchema } from './scenario.ts';
export { planFleet } from './fleet-plan.ts';
export type { FleetPlan, PlannedBmc } from './fleet-plan.ts';
export type { Scenario, ScenarioInput } from './scenario.ts';
export { FAULT_KINDS, parseFaultSpec } from './fault-spec.ts';
export type { FaultKind, FaultSpec, FaultSpecInput, FaultTarget } from './fault-spec.ts';
export type { ActiveFault } from './fault-engine.ts';
export { scaledClock } from './clock.ts';
export { simFirmwareStateSchema, type SimFirmwareState } from './firmware-state.ts';
export type { SimClock } from './clock.ts';
export { DEFAULT_BEHAVIOUR } from './behaviour.ts';
export type { SimBehaviour } from './behaviour.ts';
export type { Addressing, AddressingChoice } from './addressing.ts';
export type { BmcStats, FleetStats } from './stats.ts';
export { SIM_ERROR_CODES, SimError, controlStatus } from './errors.ts';
export type { SimErrorCode } from './errors.ts';
export { readMockupTree } from './capture.ts';
export { generateTree } from './generate-tree.ts';
export { bmcProfiles, bmcProfileByName } from './profiles/index.ts';
export type { BmcProfile } from './profiles/index.ts';
export { mockupFoldersIn } from './capture-source.ts';
export type { RedfishTree } from './capture.ts';
export { seededRandom, type Random } from './random.ts';
export type { VendorFamily } from './vendor-profile.ts';
export { PLACEHOLDER_VALUES, servingQuirksSchema } from './serving-quirks.ts';
export type { ServingQuirks } from './serving-quirks.ts';
export { issueCertificate, newBmcKey } from './tls/self-signed-certificate.ts';
export type { CertificateRequest, CertificateSubject, IssuedCertificate } from './tls/self-signed-certificate.ts';
export type { BmcTlsCounters, SimTlsOptions } from './tls/bmc-tls-endpoint.ts';
export { tlsProfileOf } from './tls/tls-profiles.ts';
export type { BmcTlsProfile, TlsVersion } from './tls/tls-profiles.ts';
