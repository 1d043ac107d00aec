import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../events/index.js';
import { readEventMessage, uuidMessage, uuidText } from '../../src/kurrent/event-mapping.js';
import { filterOf } from '../../src/kurrent/read-service.js';
import { streams } from '../../src/kurrent/protocol.js';

const clientUuid = createRequire(import.meta.url)('@eventstore/db-client/dist/utils/grpcUUID.js') as { parseUUID(uuid: unknown): string };

const event = (stream: string, type: string): RecordedEvent => ({
  eventId: '0190f5d2-0000-7000-8000-000000000001',
  type,
  schemaVersion: 1,
  stream,
  streamVersion: 3,
  position: 42,
  recordedAt: new Date('2026-12-04T07:00:00.123Z'),
  observedAt: null,
  actor: { kind: 'operator', id: 'alice', role: 'operator' },
  correlationId: null,
  causationId: null,
  data: { nodeId: 'dc1-r01-n01' },
  hash: 'a'.repeat(64),
  prevHash: 'b'.repeat(64),
});

describe('the KurrentDB mapping of events', () => {
  it('an event id in the structured form reads back as the same UUID, here and through the 6.x client\'s own parser', () => {
    fc.assert(
      fc.property(fc.uuid(), (id) => {
        expect(uuidText(uuidMessage(id, true))).toBe(id);
        expect(uuidText(uuidMessage(id, false))).toBe(id);
      }),
    );
    // The client's parser (uuid 8) accepts versions 1 to 5 only, so a consumer asking for structured ids cannot read
    // the ledger's own v7 ids: the 6.x client asks for strings, which carry any version.
    fc.assert(
      fc.property(fc.uuid({ version: [1, 2, 3, 4, 5] }), (id) => {
        expect(clientUuid.parseUUID(uuidMessage(id, true))).toBe(id);
      }),
    );
  });

  it('a revision is the stream version less one, a position is the ledger position, created is .NET ticks of recordedAt', () => {
    const record = readEventMessage(event('node-dc1-r01-n01', 'NodeCordoned'), false, 'payloads').getEvent()!.getEvent()!;
    expect(record.getStreamRevision()).toBe('2');
    expect([record.getCommitPosition(), record.getPreparePosition()]).toEqual(['42', '42']);
    expect(record.getMetadataMap().get('created')).toBe(String(Date.parse('2026-12-04T07:00:00.123Z') * 10_000));
    expect(record.getMetadataMap().get('content-type')).toBe('application/json');
  });

  it('a filter matches what KurrentDB\'s matches: any of the prefixes, or the regex, on the stream name or the event type', () => {
    const options = (configure: (filter: InstanceType<typeof streams.ReadReq.Options.FilterOptions>, expression: InstanceType<typeof streams.ReadReq.Options.FilterOptions.Expression>) => void) => {
      const filter = new streams.ReadReq.Options.FilterOptions();
      const expression = new streams.ReadReq.Options.FilterOptions.Expression();
      configure(filter, expression);
      return new streams.ReadReq.Options().setFilter(filter);
    };
    const byStream = filterOf(options((filter, expression) => filter.setStreamIdentifier(expression.setPrefixList(['node-dc1-', 'rack-']))));
    expect([event('node-dc1-r01-n01', 'X'), event('rack-r01', 'X'), event('node-dc2-r01-n01', 'X')].map(byStream.matches)).toEqual([true, true, false]);
    const single = filterOf(options((filter, expression) => filter.setStreamIdentifier(expression.setPrefixList(['node-dc1-']))));
    expect(single.streamPrefix).toBe('node-dc1-');
    const byType = filterOf(options((filter, expression) => filter.setEventType(expression.setRegex('^Node(WentDark|Recovered)$'))));
    expect(['NodeWentDark', 'NodeRecovered', 'NodeWentDarkish'].map((type) => byType.matches(event('node-x', type)))).toEqual([true, true, false]);
    expect(() => filterOf(options((filter, expression) => filter.setEventType(expression.setRegex('('))))).toThrow(/filter\.regex/);
  });

  it('a filter regex that could backtrack catastrophically is refused before it runs on the server\'s one thread', () => {
    const regex = (source: string) => () => {
      const filter = new streams.ReadReq.Options.FilterOptions().setStreamIdentifier(new streams.ReadReq.Options.FilterOptions.Expression().setRegex(source));
      return filterOf(new streams.ReadReq.Options().setFilter(filter));
    };
    for (const source of ['^(a+)+$', '(\\w*)*x', '^(node-(x?)+)*$', '(?:a+){2,}']) expect(regex(source)).toThrow(/filter\.regex: repeats a group/);
    for (const source of ['^node-dc1-', '^(?:node|rack)-', '^Node(WentDark|Recovered)$', '^(ab)+$', '[^$].*']) expect(regex(source)).not.toThrow();
  });
});
