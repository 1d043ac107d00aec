/**
 * Which simulated models serve an EventService with a Server-Sent Events stream, written from what the real
 * controllers' captures advertise (`redfish/<model>/redfish/v1/EventService` in the team's captures): only these five
 * name a `ServerSentEventUri`. The iDRAC 9 capture of a plain R750 (`dell`) has it but `ServiceEnabled: false`; the
 * rest (iLO 5, X13, GH200, AMI, Cray, S2600, iLO 4, X10, iDRAC 8) advertise no stream, so none is served for them.
 *
 * `maxEventConnections`: the captures do not say. bmcweb (the NVIDIA trays' OpenBMC) caps SSE subscriptions at 10
 * (`maxNoOfSSESubscriptions`), and field reports give about 10 for iDRAC; 10 is assumed for all.
 */
export interface SimEventServiceSpec {
  serviceEnabled: boolean;
  sseUri: string;
  registryPrefixes: readonly string[];
  maxEventConnections: number;
}

const OPENBMC = { serviceEnabled: true, sseUri: '/redfish/v1/EventService/SSE', registryPrefixes: ['Base', 'OpenBMC', 'TaskEvent', 'ResourceEvent'], maxEventConnections: 10 } as const;
const IDRAC9 = { sseUri: '/redfish/v1/SSE', registryPrefixes: [], maxEventConnections: 10 } as const;

const EVENT_SERVICES: Readonly<Record<string, SimEventServiceSpec>> = {
  dell: { ...IDRAC9, serviceEnabled: false },
  dell_multi_dpu: { ...IDRAC9, serviceEnabled: true },
  nvidia_gb200: OPENBMC,
  nvidia_gbswitch: OPENBMC,
  nvidia_dpu: OPENBMC,
};

/** The EventService a profile's BMCs serve, or undefined where the real controller advertises no stream. */
export function eventServiceOfProfile(name: string | undefined): SimEventServiceSpec | undefined {
  return name === undefined ? undefined : EVENT_SERVICES[name];
}
