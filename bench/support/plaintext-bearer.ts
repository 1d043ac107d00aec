/**
 * A token presented to the KurrentDB face over plaintext, as the attacker did: `authorization: Bearer <token>`
 * on an insecure gRPC channel, made by hand (the official client drops its call credentials on an insecure channel, so
 * through it a token never leaves the caller). The face must refuse it (`API_UNAUTHORIZED`, reason `plaintext`), not
 * use it.
 */
import { randomUUID } from 'node:crypto';
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { shared, streams, streamsGrpc } from '../../src/kurrent/protocol.js';

export interface BearerAnswer {
  /** The gRPC status code of the refusal (null: not refused). */
  status: number | null;
  /** The face's `fleet-ledger-code` trailer and the `reason` of its `fleet-ledger-details`. */
  code: string | null;
  reason: string | null;
  /** The KurrentDB `exception` trailer the client's typed errors are made from (`access-denied`, ...). */
  exception: string | null;
  /** Read: events received, and those of them carrying a payload. */
  events: number;
  withData: number;
}

function refusal(error: ServiceError | null): Pick<BearerAnswer, 'status' | 'code' | 'reason' | 'exception'> {
  if (!error) return { status: null, code: null, reason: null, exception: null };
  const details = error.metadata?.get('fleet-ledger-details')[0];
  let reason: string | null = null;
  try {
    const parsed: unknown = details === undefined ? null : JSON.parse(String(details));
    if (parsed !== null && typeof parsed === 'object' && 'reason' in parsed && typeof parsed.reason === 'string') reason = parsed.reason;
  } catch {
    reason = null;
  }
  const code = error.metadata?.get('fleet-ledger-code')[0];
  const exception = error.metadata?.get('exception')[0];
  return { status: error.code, code: code === undefined ? null : String(code), reason, exception: exception === undefined ? null : String(exception) };
}

export function plaintextBearer(port: number, token: string) {
  const client = new streamsGrpc.StreamsClient(`127.0.0.1:${port}`, credentials.createInsecure());
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return {
    /** Streams.Append of one JSON event to `stream`. */
    append(stream: string, type: string, data: unknown): Promise<BearerAnswer> {
      return new Promise((resolve) => {
        const call = client.append(metadata, (error) => resolve({ ...refusal(error), events: 0, withData: 0 }));
        const options = new streams.AppendReq.Options().setStreamIdentifier(new shared.StreamIdentifier().setStreamName(Buffer.from(stream))).setAny(new shared.Empty());
        call.write(new streams.AppendReq().setOptions(options));
        const proposed = new streams.AppendReq.ProposedMessage().setId(new shared.UUID().setString(randomUUID())).setData(Buffer.from(JSON.stringify(data)));
        proposed.getMetadataMap().set('type', type).set('content-type', 'application/json');
        call.write(new streams.AppendReq().setProposedMessage(proposed));
        call.end();
      });
    },
    /** Streams.Read of `$all` from the start, `count` events at most. */
    readAll(count: number): Promise<BearerAnswer> {
      const options = new streams.ReadReq.Options()
        .setAll(new streams.ReadReq.Options.AllOptions().setStart(new shared.Empty()))
        .setReadDirection(streams.ReadReq.Options.ReadDirection.FORWARDS)
        .setCount(String(count))
        .setNoFilter(new shared.Empty())
        .setUuidOption(new streams.ReadReq.Options.UUIDOption().setString(new shared.Empty()));
      return new Promise((resolve) => {
        let events = 0;
        let withData = 0;
        const call = client.read(new streams.ReadReq().setOptions(options), metadata);
        call.on('data', (answer: InstanceType<typeof streams.ReadResp>) => {
          if (!answer.hasEvent()) return;
          events += 1;
          if ((answer.getEvent()?.getEvent()?.getData_asU8().length ?? 0) > 0) withData += 1;
        });
        call.on('error', (error: ServiceError) => resolve({ ...refusal(error), events, withData }));
        call.on('end', () => resolve({ ...refusal(null), events, withData }));
      });
    },
    close: () => client.close(),
  };
}
