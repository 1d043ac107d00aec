import { z } from 'zod';

/** Node ids are the fleet's own names for machines: `dc1-r07-n12`, a serial, an asset tag. */
export const nodeIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'node ids use letters, digits and . _ : - only');

export const siteIdSchema = z.string().min(1).max(64).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'site ids use letters, digits and . _ - only');

/** An ISO-8601 instant with a zone, as JSON carries it. */
export const instantSchema = z.iso.datetime({ offset: true });
