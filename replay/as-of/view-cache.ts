/**
 * The views materialized for questions, by position: a small LRU of schemas, each holding the projections asked of it
 * so far (a question about dark nodes builds only liveness). Guarantees:
 * - questions about the same position share one view, and one materialization per projection, even while it is built;
 * - a view evicted (or the cache closed) while a question reads it is dropped when the last reader is done, never
 *   under a reader;
 * - a projection that failed to materialize is not cached: the next question tries again.
 */
import { AsOfError } from './as-of-error.js';
import type { MaterializeStats } from './materialize.js';

interface View {
  position: number;
  schema: string;
  created: Promise<void>;
  parts: Map<string, Promise<MaterializeStats>>;
  readers: number;
  evicted: boolean;
}

export interface ViewCacheHooks {
  /** A fresh schema name for a view of `position`. */
  nameView(position: number): string;
  createSchema(schema: string): Promise<void>;
  dropSchema(schema: string): Promise<void>;
  materialize(schema: string, position: number, projection: string): Promise<MaterializeStats>;
  /** A view was dropped or failed to drop (logged by the engine). */
  onDropError?(schema: string, error: unknown): void;
}

export class ViewCache {
  /** Least recently used first. */
  readonly #views = new Map<number, View>();
  readonly #dropping = new Set<Promise<void>>();
  /** Evicted views still being read: dropped by their last reader. */
  readonly #lingering = new Set<View>();
  #closed = false;

  constructor(
    private readonly capacity: number,
    private readonly hooks: ViewCacheHooks,
  ) {}

  get size(): number {
    return this.#views.size;
  }

  /** The positions cached, least recently used first. */
  positions(): number[] {
    return [...this.#views.keys()];
  }

  /**
   * Runs `read` against the schema of the view of `position` once `projections` are materialized in it. The view
   * cannot be dropped while `read` runs.
   */
  async use<T>(position: number, projections: readonly string[], read: (schema: string, stats: MaterializeStats[]) => Promise<T>): Promise<T> {
    if (this.#closed) throw new AsOfError('ASOF_STOPPED', {}, 'the as-of engine is stopped');
    const view = this.#acquire(position);
    try {
      await view.created;
      const stats = await Promise.all(projections.map((projection) => this.#part(view, projection)));
      return await read(view.schema, stats);
    } finally {
      this.#release(view);
    }
  }

  #acquire(position: number): View {
    let view = this.#views.get(position);
    if (view) {
      this.#views.delete(position);
    } else {
      const schema = this.hooks.nameView(position);
      view = { position, schema, created: this.hooks.createSchema(schema), parts: new Map(), readers: 0, evicted: false };
      const created = view;
      // A schema that could not be created is not a view: forget it so the next question tries again.
      view.created.catch(() => {
        if (this.#views.get(position) === created) this.#views.delete(position);
        created.evicted = true;
      });
    }
    this.#views.set(position, view);
    view.readers += 1;
    this.#evictBeyondCapacity();
    return view;
  }

  #part(view: View, projection: string): Promise<MaterializeStats> {
    let part = view.parts.get(projection);
    if (!part) {
      part = this.hooks.materialize(view.schema, view.position, projection);
      view.parts.set(projection, part);
      const pending = part;
      pending.catch(() => {
        if (view.parts.get(projection) === pending) view.parts.delete(projection);
      });
    }
    return part;
  }

  #release(view: View): void {
    view.readers -= 1;
    if (view.evicted && view.readers === 0) {
      this.#lingering.delete(view);
      this.#drop(view);
    }
  }

  #evictBeyondCapacity(): void {
    while (this.#views.size > this.capacity) {
      const [position, oldest] = this.#views.entries().next().value as [number, View];
      this.#views.delete(position);
      oldest.evicted = true;
      if (oldest.readers === 0) this.#drop(oldest);
      else this.#lingering.add(oldest);
    }
  }

  #drop(view: View): void {
    const dropping = view.created
      .then(
        () => this.hooks.dropSchema(view.schema),
        () => undefined,
      )
      .catch((error: unknown) => this.hooks.onDropError?.(view.schema, error))
      .finally(() => this.#dropping.delete(dropping));
    this.#dropping.add(dropping);
  }

  /** Forgets the view of `position` (its schema went away under it): the next question builds it again. */
  invalidate(position: number): void {
    const view = this.#views.get(position);
    if (!view) return;
    this.#views.delete(position);
    view.evicted = true;
    if (view.readers === 0) this.#drop(view);
    else this.#lingering.add(view);
  }

  /** Refuses new questions, then drops every view once its readers are done; resolves when all are dropped. */
  async close(timeoutMs = 30_000): Promise<void> {
    this.#closed = true;
    for (const view of this.#views.values()) {
      view.evicted = true;
      if (view.readers === 0) this.#drop(view);
      else this.#lingering.add(view);
    }
    this.#views.clear();
    const deadline = Date.now() + timeoutMs;
    while ((this.#dropping.size > 0 || this.#lingering.size > 0) && Date.now() < deadline) {
      await Promise.race([Promise.allSettled([...this.#dropping]), new Promise((resolve) => setTimeout(resolve, 100))]);
    }
  }
}
