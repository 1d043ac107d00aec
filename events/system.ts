import { z } from 'zod';
import { defineEvent } from './define-event.js';

/**
 * What the ledger itself records about its own work. A projection that cannot apply one event sets it aside (in
 * `projection_dead_letters`) and goes on; this event makes that visible to operators (an alarm) and auditors (the
 * log), so one bad event never stops a read model fleet-wide and never disappears silently.
 */
export const ProjectionEventSetAside = defineEvent({
  family: 'system',
  type: 'ProjectionEventSetAside',
  description: 'A projection could not apply one event: it was set aside with the reason and the projection went on.',
  schema: z.object({
    projection: z.string().min(1).max(100),
    projectionVersion: z.number().int().min(1),
    position: z.number().int().min(1),
    eventId: z.string().min(1).max(100),
    type: z.string().min(1).max(200),
    stream: z.string().min(1).max(200),
    reason: z.string().max(2000),
  }),
});

export const systemEvents = [ProjectionEventSetAside] as const;
