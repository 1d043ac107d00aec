/**
 * The KurrentDB gRPC contract, as the `@eventstore/db-client` 6.x package ships it: service definitions that
 * `@grpc/grpc-js` serves and the google-protobuf message classes both ends encode with. The package has no
 * `.proto` files and its generated code is CommonJS, so it is loaded with `require`; the types come from its own
 * declaration files. Serving the very code the client is built from keeps the wire identical to what it expects.
 */
import { createRequire } from 'node:module';

type Streams = typeof import('@eventstore/db-client/generated/streams_pb.js');
type StreamsGrpc = typeof import('@eventstore/db-client/generated/streams_grpc_pb.js');
type Shared = typeof import('@eventstore/db-client/generated/shared_pb.js');
type ServerFeatures = typeof import('@eventstore/db-client/generated/serverfeatures_pb.js');
type ServerFeaturesGrpc = typeof import('@eventstore/db-client/generated/serverfeatures_grpc_pb.js');
type Gossip = typeof import('@eventstore/db-client/generated/gossip_pb.js');
type GossipGrpc = typeof import('@eventstore/db-client/generated/gossip_grpc_pb.js');
type Status = typeof import('@eventstore/db-client/generated/status_pb.js');
type Code = typeof import('@eventstore/db-client/generated/code_pb.js');
type Persistent = typeof import('@eventstore/db-client/generated/persistent_pb.js');
type PersistentGrpc = typeof import('@eventstore/db-client/generated/persistent_grpc_pb.js');

const load = createRequire(import.meta.url);
const generated = (name: string): unknown => load(`@eventstore/db-client/generated/${name}.js`);

export const streams = generated('streams_pb') as Streams;
export const streamsGrpc = generated('streams_grpc_pb') as StreamsGrpc;
export const shared = generated('shared_pb') as Shared;
export const serverFeatures = generated('serverfeatures_pb') as ServerFeatures;
export const serverFeaturesGrpc = generated('serverfeatures_grpc_pb') as ServerFeaturesGrpc;
export const gossip = generated('gossip_pb') as Gossip;
export const gossipGrpc = generated('gossip_grpc_pb') as GossipGrpc;
export const status = generated('status_pb') as Status;
export const code = generated('code_pb') as Code;
export const persistent = generated('persistent_pb') as Persistent;
export const persistentGrpc = generated('persistent_grpc_pb') as PersistentGrpc;

export type ReadReq = import('@eventstore/db-client/generated/streams_pb.js').ReadReq;
export type ReadResp = import('@eventstore/db-client/generated/streams_pb.js').ReadResp;
export type AppendReq = import('@eventstore/db-client/generated/streams_pb.js').AppendReq;
export type AppendResp = import('@eventstore/db-client/generated/streams_pb.js').AppendResp;
export type BatchAppendReq = import('@eventstore/db-client/generated/streams_pb.js').BatchAppendReq;
export type BatchAppendResp = import('@eventstore/db-client/generated/streams_pb.js').BatchAppendResp;
export type UUID = import('@eventstore/db-client/generated/shared_pb.js').UUID;
export type StreamIdentifier = import('@eventstore/db-client/generated/shared_pb.js').StreamIdentifier;
