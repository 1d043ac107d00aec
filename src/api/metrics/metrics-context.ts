import type { Registry } from 'prom-client';
import type { ApiContext } from '../api-context.js';

/** What the metric groups read at scrape time: the API's context (less the append timer, which metrics provide). */
export type MetricsContext = Omit<ApiContext, 'timeAppend'>;

/** The registries every metric of one API instance registers in (its own: several instances in one process do not collide). */
export type Registers = Registry[];
