/** Sites that stand alone, federated into one fleet view at a centre by PostgreSQL's logical replication. */
export { siteName, siteSchema, siteSlot, siteStream, siteSubscription, SiteNameError } from './site-names.js';
export { prepareSitePublication, replicatorRole, replicatorUrl, sitePostgresSettings, sitePublication, SitePublicationError, type SiteReplicationOptions } from './site-publication.js';
export { readSlots, SiteHeartbeat, slotShare, type SiteHeartbeatOptions, type SlotStatus } from './site-heartbeat.js';
export { Centre, centrePostgresSettings, subscriptionConninfo, type CentreOptions, type SiteCard, type SiteState, type SiteStateChange } from './centre.js';
export { fleetAlarms, fleetLiveness, fleetNodes, fleetSites, fleetVector, type FleetNode, type SiteLabel, type SiteView } from './fleet-answers.js';
export { serveCentreApi } from './centre-api.js';
export type { RebuildComparison } from './site-read-models.js';
export { loadOrCreateCentreToken } from './centre-token.js';
export { SiteDoors, type SiteApi, type SiteAnswer, type ForwardedRequest } from './site-doors.js';
export { centreErrorCatalogue, CentreError, type CentreErrorCode, type CentreErrorDetails } from './centre-errors.js';
export { forwardedNodeVerbs } from './fleet-intent-routes.js';
export { childRolloutId, FleetRollouts, fleetRolloutVerbs, type ChildAnswer, type ChildView, type FleetRolloutPlan, type FleetRolloutVerb } from './fleet-rollouts.js';
