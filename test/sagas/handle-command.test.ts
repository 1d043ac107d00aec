import { describe, expect, it } from 'vitest';
import type { FleetEvent } from '../../events/index.js';
import { handleCommand, nodeDecider, nodeStream } from '../../sagas/index.js';
import { useFreshStore } from '../support/fresh-store.js';

const operator = { kind: 'operator' as const, id: 'alice', role: 'operator' as const };
const registration = (nodeId: string): FleetEvent => ({
  type: 'NodeRegistered',
  data: { nodeId, site: 'dc1', rack: 'r01', bmc: { protocol: 'redfish', address: 'https://10.0.0.1', credentialRef: 'bmc' }, expectedIntervalS: 60 },
});

describe('handleCommand: read, fold, decide, append with the version read', () => {
  const store = useFreshStore();

  it('a writer that gets in between the read and the append makes the command be decided again on the new state', async () => {
    const nodeId = 'race-1';
    await store().append(nodeStream(nodeId), [{ ...registration(nodeId), actor: operator }]);
    // Another operator cordons the node after this command read the stream (once), before it appends.
    let raced = false;
    const outcome = await handleCommand(store(), nodeStream(nodeId), nodeDecider, { intent: 'cordon', nodeId, reason: 'mine' }, {
      actor: operator,
      append: async (stream, events, expectedVersion) => {
        if (!raced) {
          raced = true;
          await store().append(stream, [{ type: 'NodeCordoned', data: { nodeId, reason: 'theirs' }, actor: { ...operator, id: 'bob' } }]);
        }
        return store().append(stream, events, { expectedVersion });
      },
    });
    // Decided again on the cordoned node: nothing more recorded, answered with bob's cordon.
    const events = await store().readStreamToEnd(nodeStream(nodeId));
    expect(events.map((event) => event.type)).toEqual(['NodeRegistered', 'NodeCordoned']);
    expect(outcome).toMatchObject({ kind: 'unchanged', position: events[1]!.position, streamVersion: 2 });
  });

  it('a command that keeps losing the race gives up after its attempts with the store’s conflict', async () => {
    const nodeId = 'race-2';
    await store().append(nodeStream(nodeId), [{ ...registration(nodeId), actor: operator }]);
    let appends = 0;
    const attempt = handleCommand(store(), nodeStream(nodeId), nodeDecider, { intent: 'set-maintenance', nodeId, from: '2026-03-02T09:00:00Z', until: '2026-03-02T10:00:00Z', reason: 'x' }, {
      actor: operator,
      attempts: 2,
      append: async (stream, events, expectedVersion) => {
        appends += 1;
        await store().append(stream, [{ type: 'NodeUncordoned', data: { nodeId }, actor: { ...operator, id: 'bob' } }]);
        return store().append(stream, events, { expectedVersion });
      },
    });
    await expect(attempt).rejects.toMatchObject({ code: 'LEDGER_WRONG_EXPECTED_VERSION' });
    expect(appends).toBe(2);
  });

  it('a refused command records nothing', async () => {
    const outcome = await handleCommand(store(), nodeStream('ghost'), nodeDecider, { intent: 'cordon', nodeId: 'ghost', reason: 'x' }, { actor: operator });
    expect(outcome).toMatchObject({ kind: 'refused', refusal: { code: 'NODE_UNKNOWN' }, streamVersion: 0 });
    expect(await store().readStreamToEnd(nodeStream('ghost'))).toEqual([]);
  });
});
