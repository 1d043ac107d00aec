/**
 * Ways a BMC serves its tree that its vendor profile does not say, given to a fleet's mix entry (`serving:`): real
 * controllers of one model differ in how their web server answers and in what their makers left unprogrammed.
 *
 * - `redirect: add-slash`: a GET of a path without a trailing slash is answered 301 to the same path with one (the
 *   slash-adding web servers of older controllers); the slashed path is served.
 * - `redirect: other-port`: every request to the BMC's usual port is answered 301 to the same path on another port of
 *   the same host (`alternatePort`, which the simulator opens), as a Lenovo IMM2 moves its service between ports.
 * - `placeholders: true`: identity strings (serials, part numbers, SKUs, asset tags) and chassis models are served as
 *   the placeholders vendors ship (`To Be Filled By O.E.M.`, `0000000`, `N/A`, `-*`, blanks...), one per property in
 *   turn, so a reader must tell them from values.
 */
import { z } from 'zod';

export const servingQuirksSchema = z.strictObject({
  redirect: z.enum(['add-slash', 'other-port']).optional(),
  placeholders: z.boolean().optional(),
});

export type ServingQuirks = z.output<typeof servingQuirksSchema>;

/** The placeholders served, in turn. Each is one a real BMC, FRU or SMBIOS table has been seen to carry. */
export const PLACEHOLDER_VALUES: readonly string[] = [
  'To Be Filled By O.E.M.',
  '0000000',
  'N/A',
  'Not Available',
  '-*',
  '   ',
  'Default string',
  'NA',
  '--',
  '',
  '-',
];

/** Properties served as placeholders wherever they are (any depth of any resource). */
const IDENTITY_PROPERTIES = new Set(['SerialNumber', 'PartNumber', 'SKU', 'AssetTag', 'SparePartNumber']);

/**
 * Where a request to a BMC with these quirks is sent instead of being answered, or undefined to answer it.
 * `target` is the path and query as the request named it (below the BMC's base URL), `prefix` the BMC's link prefix,
 * `host` the host name the request was addressed to, and `localPort` the port it arrived on.
 */
export function redirectLocation(
  quirks: ServingQuirks | undefined,
  request: { method: string; target: string; host: string; localPort: number | undefined },
  prefix: string,
  alternatePort: number | undefined,
): string | undefined {
  const redirect = quirks?.redirect;
  switch (redirect) {
    case undefined:
      return undefined;
    case 'add-slash': {
      if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
      const queryAt = request.target.indexOf('?');
      const path = queryAt >= 0 ? request.target.slice(0, queryAt) : request.target;
      if (path.endsWith('/')) return undefined;
      return `${prefix}${path}/${queryAt >= 0 ? request.target.slice(queryAt) : ''}`;
    }
    case 'other-port':
      if (alternatePort === undefined || request.localPort === alternatePort) return undefined;
      return `http://${request.host}:${alternatePort}${prefix}${request.target}`;
    default: {
      const unreachable: never = redirect;
      return unreachable;
    }
  }
}

/** A resource's body with its identity properties (and a chassis' model) replaced by placeholders, in turn. */
export function withPlaceholders(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  let turn = 0;
  const next = (): string => PLACEHOLDER_VALUES[turn++ % PLACEHOLDER_VALUES.length]!;
  const walk = (value: unknown, isChassis: boolean): unknown => {
    if (Array.isArray(value)) return value.map((item) => walk(item, false));
    if (typeof value !== 'object' || value === null) return value;
    const record = value as Record<string, unknown>;
    const chassis = isChassis || (typeof record['@odata.type'] === 'string' && /^#Chassis\./.test(record['@odata.type']));
    return Object.fromEntries(
      Object.entries(record).map(([key, item]) => {
        if (typeof item === 'string' && (IDENTITY_PROPERTIES.has(key) || (chassis && key === 'Model'))) return [key, next()];
        return [key, key === 'Links' || key.startsWith('@') ? item : walk(item, false)];
      }),
    );
  };
  return JSON.stringify(walk(parsed, false));
}
