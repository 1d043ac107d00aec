/**
 * The rules push is judged by, without a BMC: when an audit finds a gap, when a stream is stalled or proves contact,
 * how a stream's text is cut into events, and how duplicates are told.
 */
import { describe, expect, it } from 'vitest';
import { readRedfishEvent, SseParser } from '../../src/drivers/index.js';
import { judgeAudit, judgeStall, streamContactAt, type PushNode } from '../../src/poller/push/index.js';
import { RecentEvents } from '../../src/poller/push/recent-events.js';

const streaming = (over: Partial<PushNode> = {}): PushNode => ({ nodeId: 'n1', status: 'streaming', eventsSinceAudit: 0, retryAt: 0, gaps: 0, lastBeatAt: 1_000, audited: { at: 1_000, health: 'OK', powerState: 'On' }, ...over });
const reading = { listedSse: 1, heartbeatMs: undefined, health: 'OK', powerState: 'On' };

describe('push rules', () => {
  it('an audit that finds the BMC changed while the stream said nothing is a silent gap since the last agreeing audit', () => {
    expect(judgeAudit(streaming(), { ...reading, health: 'Critical' })).toMatchObject({ kind: 'silent', since: 1_000 });
    expect(judgeAudit(streaming(), { ...reading, powerState: 'Off' })).toMatchObject({ kind: 'silent' });
  });

  it('a change the stream announced, or no change at all, is no gap', () => {
    expect(judgeAudit(streaming({ eventsSinceAudit: 1 }), { ...reading, health: 'Critical' })).toBeUndefined();
    expect(judgeAudit(streaming(), reading)).toBeUndefined();
    expect(judgeAudit(streaming({ audited: undefined }), { ...reading, health: 'Critical' })).toBeUndefined(); // the first audit sets the baseline
  });

  it('a BMC that lists no SSE subscription while a stream is held is a lost subscription, whatever else it shows', () => {
    expect(judgeAudit(streaming({ eventsSinceAudit: 3 }), { ...reading, listedSse: 0 })).toMatchObject({ kind: 'subscription-lost', since: 1_000 });
  });

  it('a stream with a heartbeat is stalled after `grace` heartbeats of nothing, since its last record; without a heartbeat never', () => {
    const node = streaming({ heartbeatMs: 100, lastBeatAt: 1_000 });
    expect(judgeStall(node, 1_300, 3)).toBeUndefined();
    expect(judgeStall(node, 1_301, 3)).toMatchObject({ kind: 'stalled', since: 1_000 });
    expect(judgeStall(streaming({ heartbeatMs: undefined }), 1_000_000, 3)).toBeUndefined();
  });

  it('only a stream with a heartbeat, heard within its grace, proves contact', () => {
    expect(streamContactAt(streaming({ heartbeatMs: 100 }), 1_250, 3)).toBe(1_000);
    expect(streamContactAt(streaming({ heartbeatMs: 100 }), 1_400, 3)).toBeUndefined();
    expect(streamContactAt(streaming({ heartbeatMs: undefined }), 1_001, 3)).toBeUndefined();
    expect(streamContactAt(streaming({ heartbeatMs: 100, status: 'fallback' }), 1_001, 3)).toBeUndefined();
  });

  it('an event stream is cut into messages at blank lines, across chunks and line endings, comments and other fields ignored', () => {
    const parser = new SseParser();
    expect(parser.push(': hello\r\nid: 7\r\ndata: {"a":')).toEqual([]);
    expect(parser.push('1}\r\nretry: 5\r')).toEqual([]);
    expect(parser.push('\n\r\ndata: x\ndata: y\n\n')).toEqual([{ id: '7', data: '{"a":1}' }, { id: undefined, data: 'x\ny' }]);
    // A CRLF split between two chunks ends one line, not two (the second would be a blank line, ending the message).
    expect(parser.push('data: a\r')).toEqual([]);
    expect(parser.push('\ndata: b\n\n')).toEqual([{ id: undefined, data: 'a\nb' }]);
  });

  it('a message larger than the bound is refused, not buffered without end', () => {
    const parser = new SseParser(64);
    expect(parser.push(`data: ${'x'.repeat(100)}`)).toBe('oversize');
  });

  it('a Redfish event is read record by record; one without a MessageId is malformed, named by its place', () => {
    const event = { Events: [{ EventId: '5', MessageId: 'ResourceEvent.1.0.ResourceStatusChangedCritical', MessageSeverity: 'Critical', OriginOfCondition: { '@odata.id': '/redfish/v1/Systems/1' }, EventTimestamp: '2026-12-08T00:00:00Z' }, { MessageId: 'HeartbeatEvent.1.0.RedfishServiceFunctional' }] };
    const read = readRedfishEvent(JSON.stringify(event), '9');
    expect(read).toMatchObject({ ok: true, records: [{ eventId: '5', severity: 'Critical', origin: '/redfish/v1/Systems/1', heartbeat: false }, { eventId: '9.1', heartbeat: true }] });
    expect(readRedfishEvent(JSON.stringify({ Events: [{ EventId: 1 }] }), undefined)).toMatchObject({ ok: false, reason: expect.stringContaining('Events.0: MessageId') });
    expect(readRedfishEvent('not json', undefined)).toMatchObject({ ok: false, reason: 'not JSON' });
  });

  it('an event is admitted once; the oldest keys are forgotten past the bound', () => {
    const recent = new RecentEvents(2);
    expect([recent.admit('a'), recent.admit('a'), recent.admit('b'), recent.admit('c'), recent.admit('a')]).toEqual([true, false, true, true, true]);
  });
});
