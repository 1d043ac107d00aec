import { describe, expect, it } from 'vitest';
import { fleetCatalogue, PollOutcomesRecorded, redactedCredential, withoutCredentials } from '../../events/index.js';
import { boundedValue } from '../../src/drivers/redfish/resource-reader.js';

describe('event catalogue', () => {
  it('a payload failing its schema is refused with the field and the reason', () => {
    const check = fleetCatalogue.check('MaintenanceWindowSet', { nodeId: 'n1', from: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z', reason: 'swap' });
    expect(check).toEqual({ ok: false, reason: 'invalid-payload', issues: [{ path: 'until', message: 'must be after from' }] });
  });

  it('an unknown version of a known type is refused', () => {
    expect(fleetCatalogue.check('PollOutcomesRecorded', {}, 7)).toMatchObject({ ok: false, reason: 'unknown-version' });
  });

  it('the columnar outcome batch refuses columns of different lengths', () => {
    const check = fleetCatalogue.check('PollOutcomesRecorded', {
      site: 'dc1',
      windowStart: '2026-01-01T00:00:00Z',
      nodeIds: ['a', 'b'],
      work: ['liveness'],
      outcomes: ['success', 'timeout'],
      latencyMs: [1, 2],
      offsetMs: [0, 1],
    });
    expect(check).toMatchObject({ ok: false, issues: [{ path: 'work' }] });
  });

  it('upcasting a version-1 outcome batch gives a valid version-2 batch', () => {
    const v1 = { site: 'dc1', outcomes: [{ nodeId: 'n', work: 'liveness', outcome: 'auth', latencyMs: 3, at: '2026-01-01T00:00:01Z' }] };
    expect(fleetCatalogue.check('PollOutcomesRecorded', v1, 1).ok).toBe(true);
    const lifted = fleetCatalogue.upcast('PollOutcomesRecorded', 1, v1);
    expect(lifted.schemaVersion).toBe(PollOutcomesRecorded.schemaVersion);
    expect(PollOutcomesRecorded.schema.safeParse(lifted.data).success).toBe(true);
  });

  it('every event type carries a one-sentence description for the catalogue documentation', () => {
    for (const definition of fleetCatalogue.definitions()) {
      expect(definition.description.length, definition.type).toBeGreaterThan(10);
    }
  });
});

describe('a credential-named member in what a device sent', () => {
  const oem = { Oem: { Contoso: { Token: 'c2VjcmV0LWZyb20tdGhlLWJtYw==', Mode: 'Fast' } } };
  const observation = (value: unknown) => ({ source: 'redfish', dialect: 'generic', unrecognized: [{ path: 'Systems/1#Oem', value }], health: 'OK', conditions: [] });

  it('is refused raw (no secret enters the log) but accepted once the driver redacted it, so the node is still observed', () => {
    expect(fleetCatalogue.check('HealthObserved', observation(oem))).toMatchObject({ ok: false, issues: [{ path: 'unrecognized.0.value.Oem.Contoso.Token' }] });
    const bounded = boundedValue(oem);
    expect(JSON.stringify(bounded)).not.toContain('c2VjcmV0');
    expect(bounded).toEqual({ Oem: { Contoso: { Token: redactedCredential, Mode: 'Fast' } } });
    expect(fleetCatalogue.check('HealthObserved', observation(bounded))).toMatchObject({ ok: true });
  });

  it('withoutCredentials reaches into arrays and leaves other members as they were', () => {
    expect(withoutCredentials([{ password: 'x', n: 1 }, 'Token', null])).toEqual([{ password: redactedCredential, n: 1 }, 'Token', null]);
  });
});
