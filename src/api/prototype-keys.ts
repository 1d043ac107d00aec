/**
 * The reason a parsed body is refused for a key that would reach an object's prototype, or null. The same rule as
 * fastify's own JSON parser on the request thread (`__proto__` anywhere, `constructor.prototype` anywhere: both
 * refused), so a body is judged alike whichever thread parsed it.
 */
export function prototypeKeyRefusal(value: unknown): string | null {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (next === null || typeof next !== 'object') continue;
    if (Object.hasOwn(next, '__proto__')) return 'Object contains forbidden prototype property';
    const ctor = (next as Record<string, unknown>).constructor;
    if (Object.hasOwn(next, 'constructor') && ctor !== null && typeof ctor === 'object' && Object.hasOwn(ctor, 'prototype')) return 'Object contains forbidden prototype property';
    for (const child of Object.values(next)) if (child !== null && typeof child === 'object') pending.push(child);
  }
  return null;
}
