/**
 * The KurrentDB face takes event data as the HTTP API takes a body: bytes that are not UTF-8 and integers beyond
 * 2^53 − 1 are refused naming the field, never stored rewritten (U+FFFD, a rounded number).
 */
import { describe, expect, it } from 'vitest';
import { proposedEvent } from '../../src/kurrent/event-mapping.js';
import { KurrentCallError } from '../../src/kurrent/kurrent-error.js';
import { streams } from '../../src/kurrent/protocol.js';


function message(data: Uint8Array): InstanceType<typeof streams.AppendReq.ProposedMessage> {
  const proposed = new streams.AppendReq.ProposedMessage();
  proposed.getMetadataMap().set('type', 'NodeCordoned');
  proposed.getMetadataMap().set('content-type', 'application/json');
  proposed.setData(data);
  return proposed;
}

function refusal(data: Uint8Array): KurrentCallError {
  try {
    proposedEvent(message(data), 0);
  } catch (error) {
    if (error instanceof KurrentCallError) return error;
    throw error;
  }
  throw new Error('the event was taken');
}

describe('KurrentDB appends are refused, never rewritten', () => {
  it('event data with bytes that are not UTF-8 is INVALID_ARGUMENT naming the field, never stored as U+FFFD', () => {
    const error = refusal(Buffer.concat([Buffer.from('{"nodeId":"dc1-r01-n01","reason":"fan '), Buffer.from([0xe2, 0x28, 0xa1]), Buffer.from('"}')]));
    expect(error.message).toMatch(/^events\[0\]\.data\.reason: is not valid UTF-8/);
    expect(error.trailers).toEqual({ 'fleet-ledger-code': 'KURRENT_BAD_REQUEST', field: 'events[0].data.reason' });
  });

  it('event data holding an integer beyond 2^53 − 1 is INVALID_ARGUMENT naming the field, never stored rounded', () => {
    const error = refusal(Buffer.from('{"nodeId":"dc1-r01-n01","reason":"x","extra":{"n":18014398509481985}}'));
    expect(error.message).toMatch(/^events\[0\]\.data\.extra\.n: is 18014398509481985, an integer beyond/);
  });

  it('well-formed data is taken as parsed', () => {
    const event = proposedEvent(message(Buffer.from('{"nodeId":"dc1-r01-n01","reason":"façade 🌡"}')), 0);
    expect(event.data).toEqual({ nodeId: 'dc1-r01-n01', reason: 'façade 🌡' });
  });
});
