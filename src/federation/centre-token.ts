/**
 * The token a site issues its centre: a forwarder (`forwards: true`) with the operator role, so an intent asked at
 * the centre is recorded on the site with the principal who asked there and `via: centre:centre` (src/api/
 * forwarded-principal.ts). Made once and kept in `<data-dir>/centre-token.json` (0600); the site's card carries it to
 * the centre. Never logged.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { TokenEntry } from '../api/index.js';

const stored = z.object({ token: z.string().min(16) });

export function loadOrCreateCentreToken(dataDir: string): TokenEntry & { forwards: true } {
  const path = join(dataDir, 'centre-token.json');
  let token: string;
  if (existsSync(path)) {
    token = stored.parse(JSON.parse(readFileSync(path, 'utf8'))).token;
  } else {
    token = `fl_centre_${randomBytes(24).toString('base64url')}`;
    writeFileSync(path, `${JSON.stringify({ token })}\n`, { mode: 0o600 });
    chmodSync(path, 0o600);
  }
  return { token, principal: 'centre', role: 'operator', forwards: true };
}
