import type { HeldTableSet } from './projection.js';

/**
 * Runs `work` (one apply in its transaction) with the rebuild's tables held in memory, if it holds them: what the apply
 * wrote to memory is undone when `work` throws, as its transaction is rolled back.
 */
export async function inHeld<T>(memory: HeldTableSet | null | undefined, work: () => Promise<T>): Promise<T> {
  if (!memory) return work();
  memory.begin();
  try {
    const result = await memory.run(work);
    memory.commit();
    return result;
  } catch (error) {
    memory.rollback();
    throw error;
  }
}
