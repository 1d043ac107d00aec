import type { ReadValidators } from '../drivers/index.js';
import type { TargetState } from './target-state.js';

/** Distinct path lists kept for sharing; a fleet of more shapes than this keeps the rest per BMC. */
const maxPathLists = 2_000;

/** The validators (ETags) of a target's last full inventory-and-firmware read, in the order to ask them. */
export function validatorsOf(state: TargetState): ReadValidators | undefined {
  const kept = state.readValidators;
  if (!kept) return undefined;
  const etags = kept.etags.split('\n');
  const validators = kept.paths.map((path, index) => [path, etags[index]!] as const);
  // The resource that changed last time first: one that changes at every read then costs one request.
  const first = kept.askFirst === undefined ? -1 : validators.findIndex(([path]) => path === kept.askFirst);
  if (first > 0) validators.unshift(...validators.splice(first, 1));
  return validators;
}

/** Keeps reads' validators compactly: lists of paths shared by every BMC that served the same resources (one per model, mostly). */
export class ValidatorKeeper {
  readonly #pathLists = new Map<string, readonly string[]>();

  /** Keeps a read's validators compactly: the list of paths shared with every BMC that served the same ones. */
  keep(state: TargetState, validators: ReadValidators | undefined, changed: string | undefined): void {
    if (!validators) {
      delete state.readValidators;
      return;
    }
    const sorted = [...validators].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)); // reads run two at a time: any order
    const paths = sorted.map(([path]) => path);
    const key = paths.join('\n');
    let shared = this.#pathLists.get(key);
    if (!shared) {
      shared = paths;
      if (this.#pathLists.size < maxPathLists) this.#pathLists.set(key, shared);
    }
    state.readValidators = { paths: shared, etags: sorted.map(([, etag]) => etag).join('\n'), ...(changed ? { askFirst: changed } : {}) };
  }
}
