/**
 * A site's name is part of PostgreSQL identifiers at the centre (its schema `site_<name>`, its subscription
 * `fleet_site_<name>`) and of the literal its log rows are stamped with: lower-case letters, digits and hyphens, from
 * a letter or digit, at most 40 characters (identifiers stop at 63 bytes). The hyphen becomes an underscore in
 * identifiers; an underscore is not allowed in the name, so two names never map to one identifier.
 */
const siteNamePattern = /^[a-z0-9][a-z0-9-]{0,39}$/;

export class SiteNameError extends Error {}

/** `name` if it is a valid site name, else a `SiteNameError` saying what is allowed. */
export function siteName(name: string): string {
  if (!siteNamePattern.test(name)) {
    throw new SiteNameError(`'${name}' is not a site name: lower-case letters, digits and hyphens, from a letter or digit, at most 40 characters`);
  }
  return name;
}

const identifierPart = (site: string): string => siteName(site).replace(/-/g, '_');

/** The centre's schema for everything it holds of `site`: its log and checkpoints (partitions), its read models. */
export const siteSchema = (site: string): string => `site_${identifierPart(site)}`;

/** The centre's subscription to `site` (and the name of the replication slot it keeps on the site). */
export const siteSubscription = (site: string): string => `fleet_site_${identifierPart(site)}`;

/**
 * The replication slot a centre keeps on `site`: named after the centre too, so a centre rebuilt from scratch (or a
 * second one) subscribes beside the first without taking its slot.
 */
export const siteSlot = (site: string, centreId: string): string => `fleet_${centreId}_${identifierPart(site)}`;

/** The scratch schema a rebuild of `site`'s read models is made in, to be compared with the live ones. */
export const siteRebuildSchema = (site: string): string => `rebuild_${identifierPart(site)}`;

/** The scratch schema a site's read models are rebuilt in to answer as of a position (`tag` keeps requests apart). */
export const siteAsOfSchema = (site: string, tag: string): string => `asof_${identifierPart(site)}_${tag.replace(/[^a-z0-9]/g, '')}`;

/** The stream a site's heartbeats go to. */
export const siteStream = (site: string): string => `site-${siteName(site)}`;
