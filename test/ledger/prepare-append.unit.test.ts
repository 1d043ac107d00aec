/**
 * Preparing an append: the events of one append that share one actor object have it checked and made canonical once;
 * what a caller passes in a later append is read afresh.
 */
import { describe, expect, it } from 'vitest';
import { fleetCatalogue } from '../../events/index.js';
import { prepareAppend } from '../../src/ledger/prepare-append.js';
import { cordon } from '../support/ledger-fixtures.js';

describe('preparing an append', () => {
  it('an actor object shared by the events of an append is read once for it; changed before the next append, the change is what that append records', () => {
    const actor: { kind: 'operator'; id: string } = { kind: 'operator', id: 'ana@ops' };
    const first = prepareAppend('node-n1', [{ ...cordon('n1'), actor }, { ...cordon('n1'), actor }], fleetCatalogue, () => Date.now());
    expect(first.map((event) => event.canonicalActor)).toEqual(['{"id":"ana@ops","kind":"operator"}', '{"id":"ana@ops","kind":"operator"}']);
    actor.id = 'ben@ops';
    const second = prepareAppend('node-n1', [{ ...cordon('n1'), actor }], fleetCatalogue, () => Date.now());
    expect(second[0]!.actor).toEqual({ kind: 'operator', id: 'ben@ops' });
    expect(second[0]!.canonicalActor).toBe('{"id":"ben@ops","kind":"operator"}');
    expect(first[0]!.actor).toEqual({ kind: 'operator', id: 'ana@ops' });
  });

  it('a shared actor that cannot be stored refuses the append at its first event, naming the actor', () => {
    const actor = { kind: 'operator' as const, id: 'bad\u0000id' };
    expect(() => prepareAppend('node-n1', [{ ...cordon('n1'), actor }, { ...cordon('n1'), actor }], fleetCatalogue, () => Date.now())).toThrow(
      expect.objectContaining({ code: 'LEDGER_INVALID_EVENT', details: expect.objectContaining({ index: 0, issues: [expect.objectContaining({ path: 'actor.id' })] }) }),
    );
  });

  it('an event id given in capitals is stored in lower case, and the same id twice in one append is refused whatever its case', () => {
    const id = '01937A00-0000-7000-8000-00000000ABCD';
    expect(prepareAppend('node-n1', [cordon('n1', 'x', id)], fleetCatalogue, () => Date.now())[0]!.eventId).toBe(id.toLowerCase());
    expect(() => prepareAppend('node-n1', [cordon('n1', 'x', id), cordon('n1', 'y', id.toLowerCase())], fleetCatalogue, () => Date.now())).toThrow(/appears twice/);
  });
});
