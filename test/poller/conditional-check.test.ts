/**
 * The liveness check is conditional: it sends the ETag of its last answer as `If-None-Match`, so a BMC whose
 * answer has not changed replies 304 with no body (no JSON to build on a controller that has little to spare),
 * and the check is recorded as `not-modified`, a contact like `success`. A changed answer is read in full again.
 */
import { describe, expect, it } from 'vitest';
import { RedfishVisitor } from '../../src/poller/index.js';
import type { PollOutcomeKind } from '../../events/index.js';
import { pollOneBmc, withOneSimulatedBmc } from './support/one-bmc.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the conditional liveness check', () => {
  const fixture = withOneSimulatedBmc('etag');

  it('sends If-None-Match; an unchanged answer is a 304 recorded as not-modified, still a contact', async () => {
    const bmc = fixture.sim.bmcs[0]!;
    const target = { nodeId: bmc.id, site: bmc.site, rack: bmc.rack, baseUrl: bmc.baseUrl, credentialRef: 'c', expectedIntervalS: 60 };
    const credential = { username: bmc.username, password: bmc.password, version: '1', endpoints: [new URL(bmc.baseUrl).origin] };
    const visitor = new RedfishVisitor();
    const options = { requestTimeoutMs: 5_000, firmwareTimeoutMs: 5_000, visitDeadlineMs: 10_000, sessionLimit: 2 };
    const first = await visitor.visit(target, credential, ['liveness'], options);
    expect(first).toMatchObject({ ok: true, notModified: false, etag: expect.stringMatching(/^W\/"/) });
    const second = await visitor.visit(target, credential, ['liveness'], { ...options, ifNoneMatch: first.etag! });
    expect(second).toMatchObject({ ok: true, notModified: true });
    const stale = await visitor.visit(target, credential, ['liveness'], { ...options, ifNoneMatch: 'W/"not-what-it-serves"' });
    expect(stale).toMatchObject({ ok: true, notModified: false, etag: first.etag });
  });

  it('the poller keeps each BMC\'s ETag: after the first contact its checks are not-modified', async () => {
    const outcomes: PollOutcomeKind[] = [];
    const poller = pollOneBmc(fixture, {
      intervals: { health: 3600, inventory: 3600, firmware: 3600 },
      expectedIntervalS: 0.2,
      onOutcome: (_nodeId, work, outcome) => {
        if (work === 'liveness') outcomes.push(outcome);
      },
    });
    await sleep(1_500);
    await poller.stop();
    expect(outcomes[0]).toBe('success');
    expect(outcomes.length).toBeGreaterThan(3);
    expect(outcomes.slice(1).every((outcome) => outcome === 'not-modified'), outcomes.join(',')).toBe(true);
  });
});
