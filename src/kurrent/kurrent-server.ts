/**
 * The KurrentDB face of the ledger: a gRPC server that the KurrentDB (EventStoreDB) clients connect to with
 * `esdb://host:port?tls=false`, or over TLS with credentials. It serves Streams (Read, Append, BatchAppend, Delete,
 * Tombstone), PersistentSubscriptions, ServerFeatures (what the client asks at connect to choose its calls) and
 * Gossip.Read (a one-node cluster, for clients that discover), and on the same port KurrentDB's HTTP health endpoints
 * (`/ping`, `/health/live`). Everything else (projections, users, operations) answers UNIMPLEMENTED.
 */
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { createServer as createTlsServer } from 'node:tls';
import { Server, ServerCredentials, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import type { AnonymousReads, TokenTable } from '../api/index.js';
import type { EventStore } from '../ledger/index.js';
import { AppendService } from './append-service.js';
import { ApplicationStreams } from './application-streams.js';
import { uuidMessage } from './event-mapping.js';
import { PersistentSubscriptions } from './persistent-subscriptions.js';
import { gossip, gossipGrpc, persistentGrpc, serverFeatures, serverFeaturesGrpc, streamsGrpc, type ReadResp } from './protocol.js';
import { EncodedReadResp } from './read-wire.js';
import { ReadService } from './read-service.js';

/**
 * The Streams service as the client's generated definition gives it, but for Read's answers: an event already encoded
 * (`read-wire.ts`) goes out as its bytes; any other answer is serialized by google-protobuf as before.
 */
const streamsService = {
  ...streamsGrpc.StreamsService,
  read: {
    ...streamsGrpc.StreamsService.read,
    responseSerialize: (answer: ReadResp | EncodedReadResp): Buffer => (answer instanceof EncodedReadResp ? answer.bytes : Buffer.from(answer.serializeBinary())),
  },
};

/** The KurrentDB version this face answers ServerFeatures with: the 6.x client enables BatchAppend from 21.10. */
export const kurrentCompatibleVersion = '23.10.0';

export interface KurrentServerOptions {
  store: EventStore;
  /** The API's tokens: a principal and its token are the username and password on this face. */
  tokens: TokenTable;
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** PEM certificate chain and key: the face serves TLS (and clients can send credentials). Absent: plaintext. */
  tls?: { certChain: Buffer; privateKey: Buffer } | null;
  /**
   * What a caller without credentials reads (the KurrentDB clients send none on a plaintext channel): nothing, as an
   * unauthenticated HTTP caller (the default), or the log's envelopes without payloads when the operator opts in
   * (`start --kurrent-anonymous-envelopes`). Such a caller appends nothing, and credentials sent over plaintext are
   * refused.
   */
  anonymousReads?: AnonymousReads;
  /** Bytes of data and metadata in one append. Default 4 MiB. */
  maxAppendBytes?: number;
  /** Subscriptions open at once; one more is refused with RESOURCE_EXHAUSTED (retry later). Default 64. */
  maxSubscriptions?: number;
}

export interface KurrentServer {
  /** The port it listens on (the one asked for, or the one given for port 0). */
  port: number;
  host: string;
  tls: boolean;
  /**
   * Stops accepting calls, ends subscriptions (the clients see UNAVAILABLE and may resubscribe), then closes: calls
   * still open after `graceMs` (default 2 s: a client that never reads its subscription) are cut.
   */
  close(graceMs?: number): Promise<void>;
}

/** The methods this face serves, as ServerFeatures reports them (the client calls only what is listed). */
const supportedMethods: Array<{ service: string; method: string; features?: string[] }> = [
  { service: 'event_store.client.streams.streams', method: 'read' },
  { service: 'event_store.client.streams.streams', method: 'append' },
  { service: 'event_store.client.streams.streams', method: 'batchappend' },
  { service: 'event_store.client.streams.streams', method: 'delete' },
  { service: 'event_store.client.streams.streams', method: 'tombstone' },
  ...['create', 'update', 'delete', 'read', 'getinfo', 'replayparked', 'list'].map((method) => ({ service: 'event_store.client.persistent_subscriptions.persistentsubscriptions', method, features: ['stream', 'all'] })),
  { service: 'event_store.client.persistent_subscriptions.persistentsubscriptions', method: 'restartsubsystem' },
  { service: 'event_store.client.server_features.serverfeatures', method: 'getsupportedmethods' },
  { service: 'event_store.client.gossip.gossip', method: 'read' },
];

/** Starts the KurrentDB gRPC face over `store`. */
export async function serveKurrent(options: KurrentServerOptions): Promise<KurrentServer> {
  const host = options.host ?? '127.0.0.1';
  const stopping = new AbortController();
  const anonymousReads = options.anonymousReads ?? 'none';
  const tls = Boolean(options.tls);
  // One message may be larger than one append's limit: BatchAppend clients send up to 3 MiB of events per request
  // (`batchAppendSize`), which the face must read to answer MaximumAppendSizeExceeded rather than drop the call.
  const server = new Server({ 'grpc.max_receive_message_length': Math.max((options.maxAppendBytes ?? 4 * 2 ** 20) + 2 ** 20, 16 * 2 ** 20) });
  const applicationStreams = new ApplicationStreams(options.store);
  const reads = new ReadService({ store: options.store, tokens: options.tokens, tls, anonymousReads, stopping: stopping.signal, maxSubscriptions: options.maxSubscriptions ?? 64, applicationStreams });
  const appends = new AppendService({ store: options.store, tokens: options.tokens, tls, maxAppendBytes: options.maxAppendBytes ?? 4 * 2 ** 20, applicationStreams, stopping: stopping.signal });
  server.addService(streamsService, { read: reads.read, append: appends.append, batchAppend: appends.batchAppend, delete: appends.delete, tombstone: appends.tombstone });
  const groups = new PersistentSubscriptions({ store: options.store, tokens: options.tokens, tls, anonymousReads, stopping: stopping.signal });
  server.addService(persistentGrpc.PersistentSubscriptionsService, {
    create: groups.create,
    update: groups.update,
    delete: groups.delete,
    read: groups.read,
    getInfo: groups.getInfo,
    replayParked: groups.replayParked,
    list: groups.list,
    restartSubsystem: groups.restartSubsystem,
  });
  server.addService(serverFeaturesGrpc.ServerFeaturesService, {
    getSupportedMethods: (_call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      const answer = new serverFeatures.SupportedMethods().setEventStoreServerVersion(kurrentCompatibleVersion);
      answer.setMethodsList(
        supportedMethods.map(({ service, method, features }) => new serverFeatures.SupportedMethod().setServiceName(service).setMethodName(method).setFeaturesList(features ?? [])),
      );
      callback(null, answer);
    },
  });
  const instanceId = randomUUID();
  let port = options.port;
  server.addService(gossipGrpc.GossipService, {
    read: (_call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      const member = new gossip.MemberInfo()
        .setInstanceId(uuidMessage(instanceId, false))
        .setTimeStamp(String(BigInt(Date.now()) * 10_000n))
        .setState(gossip.MemberInfo.VNodeState.LEADER)
        .setIsAlive(true)
        .setHttpEndPoint(new gossip.EndPoint().setAddress(host).setPort(port));
      callback(null, new gossip.ClusterInfo().setMembersList([member]));
    },
  });
  // One port for gRPC and KurrentDB's HTTP health endpoints, as KurrentDB serves them: over TLS, ALPN tells HTTP/2 (gRPC)
  // from HTTP/1.1; in plaintext, the HTTP/2 connection preface does. gRPC connections go to grpc-js (TLS ended here,
  // with the same certificate), the rest to `kurrentHttp`.
  const injector = server.createConnectionInjector(ServerCredentials.createInsecure());
  const health = createHttpServer(kurrentHttp);
  const route = (socket: Duplex, http2: boolean): void => {
    if (http2) injector.injectConnection(socket);
    else health.emit('connection', socket);
  };
  const listener = options.tls
    ? createTlsServer({ cert: options.tls.certChain, key: options.tls.privateKey, ALPNProtocols: ['h2', 'http/1.1'] }, (socket) => route(socket, socket.alpnProtocol === 'h2'))
    : createNetServer((socket) => {
        socket.once('data', (first: Buffer) => route(replaying(socket, first), first.subarray(0, 4).toString('latin1') === 'PRI '));
      });
  listener.on('tlsClientError', () => undefined);
  port = await new Promise<number>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(options.port, host, () => {
      listener.off('error', reject);
      resolve((listener.address() as AddressInfo).port);
    });
  });
  return {
    port,
    host,
    tls: Boolean(options.tls),
    close: async (graceMs = 2_000) => {
      stopping.abort();
      listener.close();
      health.closeAllConnections();
      health.close();
      await new Promise<void>((resolve) => {
        // Calls still open after a grace period (a client that never reads its subscription) are cut.
        const force = setTimeout(() => {
          server.forceShutdown();
          injector.destroy();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          injector.destroy();
          resolve();
        });
      });
    },
  };
}

/**
 * The connection after its first bytes were read (to tell HTTP/2 from HTTP/1.1): a stream that gives those bytes
 * first, then the rest. Its readers (the HTTP/2 session, the HTTP/1.1 parser) read it as a stream, not the socket's
 * handle, which no longer holds the bytes already read.
 */
function replaying(socket: Socket, first: Buffer): Duplex {
  const stream = new Duplex({
    read: () => socket.resume(),
    write: (chunk: Buffer, _encoding, done) => socket.write(chunk, done),
    final: (done) => socket.end(done),
    destroy: (error, done) => {
      socket.destroy(error ?? undefined);
      done(error);
    },
  });
  stream.push(first);
  socket.on('data', (chunk: Buffer) => {
    if (!stream.push(chunk)) socket.pause();
  });
  socket.on('end', () => stream.push(null));
  socket.on('error', (error) => stream.destroy(error));
  socket.on('close', () => stream.destroy());
  return stream;
}

/**
 * KurrentDB's HTTP endpoints that tools and load balancers ask of a node, on the gRPC port: `GET /ping` and
 * `GET /health/live`. Every other path is 404: the KurrentDB HTTP API (AtomPub, its admin pages) is not served, and
 * fleet-ledger's own HTTP API is on its own port.
 */
function kurrentHttp(request: IncomingMessage, response: ServerResponse): void {
  const path = (request.url ?? '/').split('?')[0];
  request.resume();
  if (request.method === 'GET' && path === '/ping') {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ msgTypeId: 0, text: 'Ping request successfully handled' }));
  } else if ((request.method === 'GET' || request.method === 'HEAD') && path === '/health/live') {
    response.writeHead(204).end();
  } else {
    response.writeHead(404, 'Not Found', { 'content-type': 'text/plain' }).end('Not Found');
  }
}
