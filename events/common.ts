import { z } from 'zod';

/** Node ids are the fleet's own names for machines: `dc1-r07-n12`, a serial, an asset tag. */
export const nodeIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'node ids use letters, digits and . _ : - only');

export const siteIdSchema = z.string().min(1).max(64).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'site ids use letters, digits and . _ - only');

/** The instants the ledger stores: 1970-01-01 to 9999-12-31 (UTC). PostgreSQL refuses year 0 and BC dates that
 * JavaScript's `Date` accepts; an event carrying one would fail the whole group commit it joined. */
export const storableInstantRange = { from: Date.UTC(1970, 0, 1), until: Date.UTC(10000, 0, 1) } as const;

/** Why `text` is not an instant the ledger can store, or null when it is: a real calendar date (no 30 February,
 * which `Date` rolls over into March and PostgreSQL refuses) inside `storableInstantRange`. */
export function unstorableInstant(text: string): string | null {
  const parts = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]|$)/.exec(text);
  const at = Date.parse(text);
  if (!parts || Number.isNaN(at)) return 'is not an ISO-8601 instant';
  const [year, month, day] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return `names a day that does not exist (${parts[1]}-${parts[2]}-${parts[3]})`;
  if (at < storableInstantRange.from || at >= storableInstantRange.until) return 'must lie between 1970-01-01 and 9999-12-31';
  return null;
}

/** An ISO-8601 instant with a zone, as JSON carries it, that PostgreSQL and the projections can store. */
export const instantSchema = z.iso.datetime({ offset: true }).superRefine((text, context) => {
  const problem = unstorableInstant(text);
  if (problem) context.addIssue({ code: 'custom', message: problem });
});
