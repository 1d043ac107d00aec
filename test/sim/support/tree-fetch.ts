/**
 * Reads a Redfish tree in memory the way a BMC serves it: a trailing slash and path case are ignored, and
 * `?$skip=N` names a stored page. Lets the drivers read a generated tree or a capture without a socket, which is
 * how a vendor profile is held against the capture it was written from.
 */
import { DriverError } from '../../../src/drivers/index.js';
import type { RedfishTree } from '../../../src/sim/index.js';

/** A `fetch(path)` over a tree; an absent resource rejects with `DRIVER_NOT_FOUND`, as the HTTP client does on 404. */
export function treeFetch(tree: RedfishTree): (path: string) => Promise<unknown> {
  const byLower = new Map([...tree].map(([path, body]) => [path.toLowerCase(), body]));
  return async (path: string) => {
    const [pathname = '', query = ''] = path.split('?', 2);
    const trimmed = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
    const skip = new URLSearchParams(query).get('$skip');
    const key = skip !== null && skip !== '0' ? `${trimmed}?$skip=${skip}` : trimmed;
    const body = tree.get(key) ?? byLower.get(key.toLowerCase());
    if (body === undefined) throw new DriverError('DRIVER_NOT_FOUND', `${path} is not in the tree`, { url: path });
    return structuredClone(body);
  };
}
