import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledEntry } from '../../bench/support/bundled-entry.js';
import { EventStore } from '../../src/ledger/index.js';
import { backends, freshDatabase } from '../support/backends.js';

const appender = fileURLToPath(new URL('./support/crash-appender.ts', import.meta.url));

/** Runs the appender until it has acknowledged at least `minAcks` events plus a random delay, then SIGKILLs it. */
async function runAndKill(url: string, extraDelayMs: number): Promise<Map<string, number>> {
  const script = await bundledEntry(appender); // started 40 times: bundled, each start takes half the time
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, url], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked = new Map<string, number>();
    let buffer = '';
    let stderr = '';
    let armed = false;
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        const [word, id, position] = line.split(' ');
        if (word === 'ack' && id) acked.set(id, Number(position));
      }
      if (!armed && acked.size > 0) {
        armed = true;
        setTimeout(() => child.kill('SIGKILL'), extraDelayMs);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acked);
      else reject(new Error(`appender exited with ${code}: ${stderr}`));
    });
  });
}

for (const backend of backends()) {
  describe.skipIf(!backend.adminUrl)(`crash safety on ${backend.name} PostgreSQL${backend.unavailable ? ` (skipped: ${backend.unavailable})` : ''}`, () => {
    let url: string;
    let drop: () => Promise<void>;
    let store: EventStore;
    beforeAll(async () => {
      ({ url, drop } = await freshDatabase(backend.adminUrl!));
      store = await EventStore.open({ connectionString: url });
    });
    afterAll(async () => {
      await store.close();
      await drop();
    });

    it('no acknowledged append is lost when the writer is killed with SIGKILL at random moments, and the chain verifies', async () => {
      const acknowledged = new Map<string, number>();
      const kills = 20;
      for (let run = 0; run < kills; run += 1) {
        const acked = await runAndKill(url, Math.floor(Math.random() * 400));
        for (const [id, position] of acked) acknowledged.set(id, position);
      }
      const ids = [...acknowledged.keys()];
      expect(ids.length).toBeGreaterThan(kills);
      const stored = await store.db.selectFrom('ledger_events').select(['event_id', 'position']).where('event_id', 'in', ids).execute();
      const storedPositions = new Map(stored.map((row) => [row.event_id, Number(row.position)]));
      for (const [id, position] of acknowledged) expect(storedPositions.get(id), `acknowledged event ${id}`).toBe(position);
      const verdict = await store.verifyChain();
      expect(verdict).toMatchObject({ ok: true });
      expect(verdict.checked).toBeGreaterThanOrEqual(ids.length);
    }, 240_000);
  });
}
