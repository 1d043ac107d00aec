/**
 * The hardware abstraction: one `DeviceDriver` interface, its Redfish, IPMI, SNMP and in-band GPU implementations,
 * the dialect records, the typed driver errors, and observation change detection. Code outside `src/drivers`
 * imports only from here.
 */
export type { DeviceDriver, DriverCapabilities, ObserveOptions, PowerAction } from './device-driver.js';
export { noCapabilities } from './device-driver.js';
export { DriverError, driverErrorCatalogue, driverErrorCodes, isDriverError, toDriverError } from './driver-error.js';
export type { DriverErrorCode, DriverErrorDetails } from './driver-error.js';

export { maxReadValidators, RedfishDriver } from './redfish/redfish-driver.js';
export type { ConditionalObservation, ReadValidators, RedfishDriverOptions } from './redfish/redfish-driver.js';
export type { FirmwareSubmission, FirmwareUpdateRequest, UpdateTaskReading } from './redfish/firmware-update.js';
export { RedfishClient } from './redfish/redfish-client.js';
export { RedfishAccountService, type AccountCredential, type AccountServiceOptions } from './redfish/account-service.js';
export { BmcConnection } from './tls/bmc-connection.js';
export type { BmcConnectionOptions } from './tls/bmc-connection.js';
export { bmcConnector } from './tls/bmc-connector.js';
export type { BmcConnector, BmcConnectorOptions } from './tls/bmc-connector.js';
export { certificateFingerprint, judgeCertificate, summarizeCertificate } from './tls/bmc-tls-policy.js';
export type { BmcTlsOptions, BmcTrust, TlsMinVersion, TrustedCertificate } from './tls/bmc-tls-policy.js';
export type { RedfishClientOptions } from './redfish/redfish-client.js';
export { readRedfishNode } from './redfish/read-node.js';
export { expandQueryOf, isExpandQuery } from './redfish/resource-reader.js';
export type { NodeReading, ReadNodeOptions } from './redfish/read-node.js';
export { normalizeRedfishError, extractRedfishMessages } from './redfish/redfish-error.js';
export { detectDialect, dialectById, genericDialect, redfishDialects } from './redfish/dialect.js';
export { MAX_REDIRECT_HOPS, redirectTarget } from './redfish/redirect-policy.js';
export type { DialectClue, DialectFingerprint, DialectQuirk, RedfishDialect, VersionRule } from './redfish/dialect.js';

export { IpmiDriver } from './ipmi/ipmi-driver.js';
export type { IpmiDriverOptions } from './ipmi/ipmi-driver.js';
export {
  parseChassisStatus,
  parseDcmiPowerReading,
  parseFru,
  parseMcInfo,
  parseSdr,
  summarizeSensors,
} from './ipmi/ipmitool-parsers.js';

export { SnmpDriver, snmpDialects } from './snmp/snmp-driver.js';
export type { SnmpDialect, SnmpDriverOptions } from './snmp/snmp-driver.js';

export { gpuQueryFields, parseNvidiaSmiCsv } from './gpu/nvidia-smi-csv.js';
export { parseNvidiaSmiQuery } from './gpu/nvidia-smi-query.js';
export { parseNvidiaSmiXml } from './gpu/nvidia-smi-xml.js';
export { describeXid, parseXidLog, xidCatalogue } from './gpu/xid.js';
export type { XidCatalogueEntry } from './gpu/xid.js';
export { collectGpuObservations } from './gpu/gpu-agent.js';
export type { GpuAgentOptions, GpuAgentResult } from './gpu/gpu-agent.js';

export { storableText, storableValue } from './storable-text.js';
export { isPlaceholder, presentText } from './placeholder.js';
export type { PlaceholderKind } from './placeholder.js';
export { canonicalVendor } from './vendor-name.js';
export { canonicalObservationJson, changedObservations, observationContentHash, volatileObservationFields } from './observation-hash.js';

export { startMockupServer } from './mockup/mockup-server.js';
export type { MockupFault, MockupServer, MockupServerOptions, MockupStats } from './mockup/mockup-server.js';

export { openEventStream } from './redfish/events/sse-stream.js';
export type { EventStream, EventStreamEnd, EventStreamOptions } from './redfish/events/sse-stream.js';
export { listSubscriptions, readPushOffer, readSseSubscriptions, readSubscription, submitTestEvent } from './redfish/events/event-service.js';
export type { ListedSseSubscription, PushOffer } from './redfish/events/event-service.js';
export { readRedfishEvent } from './redfish/events/redfish-event.js';
export type { PushedEventRecord } from './redfish/events/redfish-event.js';
export { SseParser } from './redfish/events/sse-parser.js';
