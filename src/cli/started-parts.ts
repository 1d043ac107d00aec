/**
 * What a `start` has brought up so far, newest last. If the start fails before it is up (a busy database during
 * the fleet's registration, a bad option found late), `stopAll` stops each part, newest first, so nothing it started
 * outlives it: above all the embedded PostgreSQL, which runs in its own process group and would otherwise keep its
 * port and data folder after the process is gone. Once the start is up, its orderly stop takes over (`handOver`).
 */
export class StartedParts {
  #parts: Array<{ part: string; stop: () => Promise<unknown> | undefined }> = [];

  add(part: string, stop: () => Promise<unknown> | undefined): void {
    this.#parts.push({ part, stop });
  }

  /** The caller stops the parts itself from here on: a later `stopAll` stops nothing twice. */
  handOver(): void {
    this.#parts = [];
  }

  /** Stops every part, newest first; a part that fails to stop is reported and the others are still stopped. */
  async stopAll(onError: (part: string, error: unknown) => void): Promise<void> {
    const parts = this.#parts.reverse();
    this.#parts = [];
    for (const { part, stop } of parts) {
      try {
        await stop();
      } catch (error) {
        onError(part, error);
      }
    }
  }
}
