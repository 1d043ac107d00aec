import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appendRefusal, logView, readsReadModels, rolesReadingReadModels, rolesWithView, roles, type Principal } from '../../src/api/index.js';

const operator: Principal = { id: 'alice', role: 'operator' };
const agent: Principal = { id: 'gpu-17', role: 'agent', nodes: ['dc1-*'] };
const nodeId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,30}$/);
const nodeIntents = ['NodeRegistered', 'NodeDecommissioned', 'NodeCordoned', 'NodeUncordoned', 'NodeQuarantined', 'NodeReleased', 'LockoutLatchCleared', 'MaintenanceWindowSet'] as const;

describe('the authorization policy', () => {
  it('an intent about node X is allowed in node-X and refused in every other node stream (API_STREAM_MISMATCH naming node-X)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...nodeIntents), nodeId, nodeId, (type, x, y) => {
        const refusal = appendRefusal({ principal: operator, type, stream: `node-${y}`, data: { nodeId: x, reason: 'r' } });
        if (x === y) expect(refusal).toBeNull();
        else expect(refusal).toMatchObject({ code: 'API_STREAM_MISMATCH', status: 403, details: { stream: `node-${y}`, derivedStream: `node-${x}`, type } });
      }),
    );
  });

  it('no caller appends anything to a stream the ledger writes itself (API_STREAM_RESERVED for writers, whatever the suffix)', () => {
    fc.assert(
      fc.property(fc.constantFrom('polls-', 'rollout-', 'fwstep-', 'capacity-', 'provision-', 'saga-', 'lease-', 'ebom-', 'projection-', 'witness-', '$'), fc.string({ maxLength: 20 }), fc.constantFrom(operator, agent), fc.constantFrom('NodeRegistered', 'NodeCordoned', 'GpuXidObserved'), (prefix, suffix, principal, type) => {
        const refusal = appendRefusal({ principal, type, stream: `${prefix}${suffix}`, data: { nodeId: 'dc1-r01-n01' } });
        expect(refusal?.code).toBe(principal.role === 'agent' && type !== 'GpuXidObserved' ? 'API_FORBIDDEN' : 'API_STREAM_RESERVED');
      }),
    );
  });

  it("an application's event goes through the KurrentDB face only, by operators and admins, to application streams only, never under a catalogue type", () => {
    const admin: Principal = { id: 'root', role: 'admin' };
    const event = (type: string) => ({ type, contentType: 'application/json', data: { text: '{}' }, metadata: { text: '' } });
    const ask = (principal: Principal, stream: string, type = 'OrderPlaced', door: 'http' | 'kurrent' = 'kurrent') => appendRefusal({ principal, type: 'ApplicationEvent', stream, data: event(type), door });
    expect(ask(operator, 'orders-17')).toBeNull();
    expect(ask(admin, 'orders-17')).toBeNull();
    expect(ask(agent, 'orders-17')).toMatchObject({ code: 'API_FORBIDDEN' });
    expect(ask({ id: 'carol', role: 'auditor' }, 'orders-17')).toMatchObject({ code: 'API_FORBIDDEN' });
    expect(ask(operator, 'orders-17', 'OrderPlaced', 'http')).toMatchObject({ code: 'API_FORBIDDEN' });
    for (const fleet of ['node-dc1-r01-n01', 'rack-r01', 'alarm-x', 'polls-dc1', '$settings']) expect(ask(operator, fleet)).toMatchObject({ code: 'API_STREAM_RESERVED' });
    expect(ask(operator, 'orders-17', 'NodeCordoned')).toMatchObject({ code: 'API_FORBIDDEN' });
  });

  it('an observation goes to a node stream only, and an agent only to its own nodes', () => {
    const xid = { source: 'agent', dialect: 'generic', unrecognized: [], events: [] };
    expect(appendRefusal({ principal: operator, type: 'GpuXidObserved', stream: 'rack-r01', data: xid })).toMatchObject({ code: 'API_STREAM_MISMATCH', details: { derivedStream: 'node-<nodeId>' } });
    expect(appendRefusal({ principal: agent, type: 'GpuXidObserved', stream: 'node-dc1-r01-n01', data: xid })).toBeNull();
    expect(appendRefusal({ principal: agent, type: 'GpuXidObserved', stream: 'node-fra2-r01-n01', data: xid })).toMatchObject({ code: 'API_FORBIDDEN' });
  });

  it('a caller without credentials appends nothing and reads nothing unless the server opted into envelopes', () => {
    expect(appendRefusal({ principal: null, type: 'NodeCordoned', stream: 'node-a', data: { nodeId: 'a', reason: 'r' } })).toMatchObject({ code: 'API_UNAUTHORIZED', status: 401, details: { reason: 'missing' } });
    expect(logView(null)).toBe('none');
    expect(logView(null, 'envelopes')).toBe('envelopes');
  });

  it('payloads are read by auditors and admins, envelopes by analysts and operators too, and nothing by agents', () => {
    expect(Object.fromEntries(roles.map((role) => [role, logView({ id: role, role })]))).toEqual({ operator: 'envelopes', analyst: 'envelopes', auditor: 'payloads', admin: 'payloads', agent: 'none' });
    expect(rolesWithView('payloads')).toEqual(['auditor', 'admin']);
    expect(rolesWithView('envelopes')).toEqual(['operator', 'analyst', 'auditor', 'admin']);
  });

  it('operators read the read models they act on, as analysts and admins do; auditors read the log, agents nothing', () => {
    expect(Object.fromEntries(roles.map((role) => [role, readsReadModels(role)]))).toEqual({ operator: true, analyst: true, auditor: false, admin: true, agent: false });
    expect(rolesReadingReadModels()).toEqual(['operator', 'analyst', 'admin']);
  });
});
