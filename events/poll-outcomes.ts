import { z } from 'zod';
import { defineEvent } from './define-event.js';
import { instantSchema, siteIdSchema } from './common.js';

/** What one contact attempt with a BMC came to. `not-modified` is a success answered by an ETag match. */
export const pollOutcomeKinds = ['success', 'not-modified', 'timeout', 'refused', 'session-limit', 'auth', 'protocol', 'latched'] as const;
export const pollOutcomeKindSchema = z.enum(pollOutcomeKinds);
export type PollOutcomeKind = z.infer<typeof pollOutcomeKindSchema>;

/** The kind of work a poll did: a light liveness check, sensors and health, or the full firmware inventory. */
export const pollWorkSchema = z.enum(['liveness', 'health', 'inventory', 'firmware']);

const outcomeRowV1 = z.object({
  nodeId: z.string().min(1),
  work: pollWorkSchema,
  outcome: pollOutcomeKindSchema,
  latencyMs: z.number().int().nonnegative(),
  at: instantSchema,
});

const pollOutcomesV1 = z.object({
  site: siteIdSchema,
  outcomes: z.array(outcomeRowV1).min(1),
});

/**
 * Version 2 is columnar: one array per field, all of the same length, times as millisecond offsets from
 * `windowStart`. At 25,000 nodes polled every 60 s this is what keeps every outcome affordable to keep.
 */
const pollOutcomesV2 = z
  .object({
    site: siteIdSchema,
    windowStart: instantSchema,
    nodeIds: z.array(z.string().min(1)).min(1),
    work: z.array(pollWorkSchema),
    outcomes: z.array(pollOutcomeKindSchema),
    latencyMs: z.array(z.number().int().nonnegative()),
    offsetMs: z.array(z.number().int().nonnegative()),
  })
  .superRefine((batch, ctx) => {
    const length = batch.nodeIds.length;
    for (const column of ['work', 'outcomes', 'latencyMs', 'offsetMs'] as const) {
      if (batch[column].length !== length) {
        ctx.addIssue({ code: 'custom', path: [column], message: `has ${batch[column].length} entries, nodeIds has ${length}` });
      }
    }
  });

export type PollOutcomesBatch = z.infer<typeof pollOutcomesV2>;

function upcastRowsToColumns(batch: z.infer<typeof pollOutcomesV1>): PollOutcomesBatch {
  const times = batch.outcomes.map((row) => Date.parse(row.at));
  const windowStart = Math.min(...times);
  return {
    site: batch.site,
    windowStart: new Date(windowStart).toISOString(),
    nodeIds: batch.outcomes.map((row) => row.nodeId),
    work: batch.outcomes.map((row) => row.work),
    outcomes: batch.outcomes.map((row) => row.outcome),
    latencyMs: batch.outcomes.map((row) => row.latencyMs),
    offsetMs: times.map((time) => time - windowStart),
  };
}

export const PollOutcomesRecorded = defineEvent({
  family: 'poll-outcome',
  type: 'PollOutcomesRecorded',
  description: 'Every poll outcome of one site in one scheduler flush (stream polls-<site>).',
  schemaVersion: 2,
  schema: pollOutcomesV2,
  previousVersions: [{ version: 1, schema: pollOutcomesV1, upcast: upcastRowsToColumns }],
});

export const pollOutcomeEvents = [PollOutcomesRecorded] as const;
