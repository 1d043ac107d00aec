/** A binary min-heap of targets by due time (ms). Entries are replaced lazily: stale ones are skipped by the caller. */
export class DueQueue {
  readonly #heap: Array<{ due: number; nodeId: string; seq: number }> = [];

  get size(): number {
    return this.#heap.length;
  }

  push(nodeId: string, due: number, seq: number): void {
    const heap = this.#heap;
    heap.push({ due, nodeId, seq });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.due <= heap[i]!.due) break;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  }

  peek(): { due: number; nodeId: string; seq: number } | undefined {
    return this.#heap[0];
  }

  pop(): { due: number; nodeId: string; seq: number } | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let smallest = i;
        if (l < heap.length && heap[l]!.due < heap[smallest]!.due) smallest = l;
        if (r < heap.length && heap[r]!.due < heap[smallest]!.due) smallest = r;
        if (smallest === i) break;
        [heap[smallest], heap[i]] = [heap[i]!, heap[smallest]!];
        i = smallest;
      }
    }
    return top;
  }
}
