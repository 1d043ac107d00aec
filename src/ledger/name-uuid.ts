import { createHash } from 'node:crypto';

/**
 * A UUID (version 8, name-based) from a name: the same name always gives the same event id, so an append repeated
 * after a crash or a client retry is recognised by the store as the same event (an idempotent replay).
 */
export function nameUuid(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
