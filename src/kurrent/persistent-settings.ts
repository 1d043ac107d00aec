/**
 * A persistent subscription group's settings as the client sends them and as they are kept (`kurrent_persistent_subscriptions`),
 * where a group starts, its filter, and the refusals the service answers with (`NotFound`, `AlreadyExists`).
 */
import { status } from '@grpc/grpc-js';
import { KurrentCallError } from './kurrent-error.js';
import { streamNameBytes } from './event-mapping.js';
import { persistent } from './protocol.js';
import { filterFrom, type FilterMessage } from './read-service.js';
import { kurrentStreamText, ledgerStreamName } from './stream-names.js';

export type Persistent = typeof persistent;
export type CreateReq = InstanceType<Persistent['CreateReq']>;
export type UpdateReq = InstanceType<Persistent['UpdateReq']>;
export type DeleteReq = InstanceType<Persistent['DeleteReq']>;
export type ReadReq = InstanceType<Persistent['ReadReq']>;
export type ReadResp = InstanceType<Persistent['ReadResp']>;
export type GetInfoReq = InstanceType<Persistent['GetInfoReq']>;
export type ReplayParkedReq = InstanceType<Persistent['ReplayParkedReq']>;
export type ListReq = InstanceType<Persistent['ListReq']>;
export type SubscriptionInfo = InstanceType<Persistent['SubscriptionInfo']>;
export type Settings = InstanceType<Persistent['CreateReq']['Settings']> | InstanceType<Persistent['UpdateReq']['Settings']>;

export const allSource = '$all';
/** KurrentDB's "end" as the deprecated stream revision setting (the largest UInt64). */
export const revisionEnd = '18446744073709551615';

/** A group's settings as the client gave them (what GetInfo and List answer). */
export interface GroupSettings {
  resolveLinks: boolean;
  extraStatistics: boolean;
  maxRetryCount: number;
  minCheckpointCount: number;
  maxCheckpointCount: number;
  maxSubscriberCount: number;
  liveBufferSize: number;
  readBatchSize: number;
  historyBufferSize: number;
  messageTimeoutMs: number;
  checkpointAfterMs: number;
  consumerStrategy: string;
  /** `0` (start), `-1` (end), a revision; for `$all` `C:<commit>/P:<prepare>`, `C:0/P:0`, `C:-1/P:-1`. */
  startFrom: string;
}

/** A filter of a group on `$all`, as stored. */
export interface StoredFilter {
  on: 'stream' | 'type';
  prefixes: string[];
  regex: string;
}

export interface GroupRow {
  source: string;
  group_name: string;
  settings: GroupSettings;
  filter: StoredFilter | null;
  checkpoint: string | number | null;
  start_at: string | number;
}

export function strategyName(settings: Settings): string {
  // CreateReq.Settings carries the strategy's name too (newer clients); UpdateReq.Settings only the enumeration.
  const named = 'getConsumerStrategy' in settings ? (settings as { getConsumerStrategy(): string }).getConsumerStrategy() : '';
  if (named) return named;
  switch (settings.getNamedConsumerStrategy()) {
    case persistent.CreateReq.ConsumerStrategy.DISPATCHTOSINGLE:
      return 'DispatchToSingle';
    case persistent.CreateReq.ConsumerStrategy.PINNED:
      return 'Pinned';
    default:
      return 'RoundRobin';
  }
}

export function settingsOf(settings: Settings | undefined, startFrom: string): GroupSettings {
  if (!settings) throw KurrentCallError.badRequest('settings', 'are missing');
  const ms = (hasMs: boolean, msValue: number, ticks: string): number => (hasMs ? msValue : Math.round(Number(ticks || '0') / 10_000));
  return {
    resolveLinks: settings.getResolveLinks(),
    extraStatistics: settings.getExtraStatistics(),
    maxRetryCount: settings.getMaxRetryCount(),
    minCheckpointCount: settings.getMinCheckpointCount(),
    maxCheckpointCount: settings.getMaxCheckpointCount(),
    maxSubscriberCount: settings.getMaxSubscriberCount(),
    liveBufferSize: settings.getLiveBufferSize(),
    readBatchSize: settings.getReadBatchSize(),
    historyBufferSize: settings.getHistoryBufferSize(),
    messageTimeoutMs: ms(settings.hasMessageTimeoutMs(), settings.getMessageTimeoutMs(), settings.getMessageTimeoutTicks()),
    checkpointAfterMs: ms(settings.hasCheckpointAfterMs(), settings.getCheckpointAfterMs(), settings.getCheckpointAfterTicks()),
    consumerStrategy: strategyName(settings),
    startFrom,
  };
}

/** Where a group starts, from a create or update request: a stream's revision, or a position of `$all`. */
export interface StartOptions {
  hasAll(): boolean;
  getAll(): { hasStart(): boolean; hasEnd(): boolean; getPosition(): { getCommitPosition(): string; getPreparePosition(): string } | undefined } | undefined;
  hasStream(): boolean;
  getStream(): { hasStart(): boolean; hasEnd(): boolean; getRevision(): string } | undefined;
}

export function startFromOf(options: StartOptions, settings: Settings | undefined): string {
  if (options.hasAll()) {
    const all = options.getAll()!;
    if (all.hasStart()) return 'C:0/P:0';
    if (all.hasEnd()) return 'C:-1/P:-1';
    const position = all.getPosition();
    return position ? `C:${position.getCommitPosition()}/P:${position.getPreparePosition()}` : 'C:-1/P:-1';
  }
  if (options.hasStream()) {
    const stream = options.getStream()!;
    if (stream.hasStart()) return '0';
    if (stream.hasEnd()) return '-1';
    return stream.getRevision();
  }
  const revision = settings?.getRevision() ?? revisionEnd;
  return revision === revisionEnd ? '-1' : revision;
}

export function filterOfRow(filter: StoredFilter | null): ReturnType<typeof filterFrom> | null {
  if (!filter) return null;
  const expression = { getPrefixList: () => filter.prefixes, getRegex: () => filter.regex };
  const message: FilterMessage = {
    hasStreamIdentifier: () => filter.on === 'stream',
    getStreamIdentifier: () => (filter.on === 'stream' ? expression : undefined),
    getEventType: () => (filter.on === 'type' ? expression : undefined),
  };
  return filterFrom(message);
}

export function notFound(source: string, group: string): KurrentCallError {
  const stream = source === allSource ? allSource : kurrentStreamText(source);
  return new KurrentCallError(status.NOT_FOUND, `Subscription group ${group} on stream ${stream} does not exist.`, {
    exception: 'persistent-subscription-does-not-exist',
    'stream-name': stream,
    'group-name': group,
    'fleet-ledger-code': 'KURRENT_SUBSCRIPTION_NOT_FOUND',
  });
}

export function exists(source: string, group: string): KurrentCallError {
  const stream = source === allSource ? allSource : kurrentStreamText(source);
  return new KurrentCallError(status.ALREADY_EXISTS, `Subscription group ${group} on stream ${stream} exists.`, {
    exception: 'persistent-subscription-exists',
    'stream-name': stream,
    'group-name': group,
    'fleet-ledger-code': 'KURRENT_SUBSCRIPTION_EXISTS',
  });
}

/** The source named by a request's options: a stream (its ledger name) or `$all`. */
export function sourceOf(options: { hasAll(): boolean; getStreamIdentifier(): import('./protocol.js').StreamIdentifier | undefined } | undefined): string {
  if (!options) throw KurrentCallError.badRequest('options', 'are missing');
  if (options.hasAll()) return allSource;
  return ledgerStreamName(streamNameBytes(options.getStreamIdentifier()));
}

/** One event handed out: to whom, how many times before, and when it is due back. */
