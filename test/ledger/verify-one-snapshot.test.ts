import { describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.js';
import { bearer, tokenTable } from '../api/support/api-harness.js';
import { useFreshStore } from '../support/fresh-store.js';
import { cordon } from '../support/ledger-fixtures.js';

/**
 * A verdict about the log is about one state of it: while a writer appends, a verify of the untouched log reads its
 * head, its rows and "rows beyond the head" in one snapshot, so it never reports CHAIN BROKEN. (Read in separate
 * statements, an append committing between them looked like a row beyond the head: 7 of 12 calls in issue 39.)
 */
describe('verify under a concurrent writer', () => {
  const store = useFreshStore();

  it('an untouched log is never reported broken while appends commit (0 false alarms in 40 verifies)', async () => {
    // Given a log long enough that one verify spans many commits of a busy writer
    for (let i = 0; i < 20; i++) await store().append(`node-seed-${i % 5}`, Array.from({ length: 50 }, (_, j) => cordon(`n${j % 7}`, `seed ${i}.${j}`)));
    let writing = true;
    let appended = 0;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        await store().append(`node-load-${i % 9}`, [cordon(`n${i % 11}`, `load ${i}`)]);
        appended += 1;
      }
    })();
    // When 40 verifies run while the writer appends (two at a time, as two auditors would)
    const verdicts = [];
    try {
      for (let round = 0; round < 20; round++) verdicts.push(...(await Promise.all([store().verifyChain(), store().verifyChain()])));
    } finally {
      writing = false;
      await writer;
    }
    // Then every verdict is intact, and each names the head it judged (the log grew under them)
    const broken = verdicts.filter((verdict) => !verdict.ok);
    expect(broken, JSON.stringify(broken.slice(0, 3))).toEqual([]);
    expect(verdicts).toHaveLength(40);
    for (const verdict of verdicts) expect(verdict.to).toBe(verdict.headPosition);
    expect(appended).toBeGreaterThan(20);
    expect(new Set(verdicts.map((verdict) => verdict.headPosition)).size).toBeGreaterThan(1);
  });

  it('GET /v1/verify answers intact under a concurrent writer, with the head its rows were judged against', async () => {
    const app = await buildApi({ store: store(), tokens: tokenTable });
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) await store().append(`node-api-${i % 9}`, [cordon(`n${i % 11}`, `api ${i}`)]);
    })();
    const answers = [];
    try {
      for (let round = 0; round < 20; round++) answers.push((await app.inject({ method: 'GET', url: '/v1/verify', headers: bearer('auditor') })).json());
    } finally {
      writing = false;
      await writer;
      await app.close();
    }
    expect(answers.filter((answer) => !answer.ok)).toEqual([]);
    for (const answer of answers) expect(answer.to).toBe(answer.headPosition);
  });
});
