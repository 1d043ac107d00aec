/**
 * The events of one node recorded lately, by key (`EventId`, timestamp and message: an id a rebooted BMC reuses is
 * another event), so a duplicate sent again is dropped. Bounded: the oldest keys are forgotten past `capacity`.
 */
export class RecentEvents {
  readonly #keys = new Set<string>();

  constructor(private readonly capacity = 512) {}

  /** True the first time a key is offered; false for a duplicate. */
  admit(key: string): boolean {
    if (this.#keys.has(key)) return false;
    this.#keys.add(key);
    if (this.#keys.size > this.capacity) {
      const oldest = this.#keys.values().next().value;
      if (oldest !== undefined) this.#keys.delete(oldest);
    }
    return true;
  }
}
