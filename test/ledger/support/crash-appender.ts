/**
 * A writer that appends until it is killed: four concurrent appenders, each printing `ack <eventId>
 * <position>` for every event only after its append resolved (that is, after commit). Used by the crash test.
 */
import { randomUUID } from 'node:crypto';
import { EventStore } from '../../../src/ledger/index.js';

const url = process.argv[2];
if (!url) throw new Error('usage: crash-appender <database-url>');
const store = await EventStore.open({ connectionString: url, migrate: false });
process.stdout.write('ready\n');
const writer = async (w: number): Promise<never> => {
  for (let i = 0; ; i += 1) {
    const events = Array.from({ length: 1 + (i % 3) }, (_, k) => ({
      eventId: randomUUID(),
      type: 'NodeCordoned',
      data: { nodeId: `crash-${w}`, reason: `iteration ${i}.${k}` },
      actor: { kind: 'operator' as const, id: 'crash-test' },
    }));
    const result = await store.append(`node-crash-${w}-${i % 5}`, events);
    process.stdout.write(events.map((e, k) => `ack ${e.eventId} ${result.positions[k]}\n`).join(''));
  }
};
await Promise.all([0, 1, 2, 3].map(writer));
