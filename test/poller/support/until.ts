/** Waits until `condition` holds, checking every `everyMs`; fails naming `what` once `deadlineMs` has passed. */
export async function until(condition: () => boolean | Promise<boolean>, deadlineMs: number, what: string, everyMs = 50): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${deadlineMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
