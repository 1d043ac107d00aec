/**
 * KurrentDB's persistent subscriptions (consumer groups) over the ledger: the PersistentSubscriptions service. A group
 * reads one stream (or `$all`, filtered) and hands each event to one of its connected consumers, which acknowledges it
 * (ack), or asks for it again (nack retry), skips it, or parks it; an event not acknowledged within the message timeout
 * is handed out again, and past `maxRetryCount` retries it is parked. Parked events are delivered again on request
 * (ReplayParked).
 *
 * What is kept in PostgreSQL (`kurrent_persistent_subscriptions`, `kurrent_parked_messages`, migration 0009): each
 * group's settings, its checkpoint (the revision or position below which every event was acknowledged, written after
 * `minCheckpointCount` acknowledgements, after `checkpointAfter`, and when its last consumer leaves) and its parked
 * events. A group's in-flight state lives in the serving process: a group whose consumers all left, a restart of the
 * subsystem or of the server resumes from the checkpoint, so an event may be delivered again (at least once, as in
 * KurrentDB). One process serves a group: consumers of one group connected to two fleet-ledger processes would each
 * be handed every event (their checkpoints agree, being the same row, but deliveries are not shared).
 *
 * Authorization is the log's: connecting to a group reads events, in the caller's view of the log (payloads or
 * envelopes); creating, updating, deleting and replaying groups takes a role that writes (operator, admin).
 */
import { Metadata, status, type sendUnaryData, type ServerDuplexStream, type ServerUnaryCall } from '@grpc/grpc-js';
import { sql } from 'kysely';
import { ApiError, writerRefusal, type AnonymousReads, type Principal, type TokenTable } from '../api/index.js';
import type { EventStore } from '../ledger/index.js';
import { callerOf, readerView } from './kurrent-auth.js';
import { KurrentCallError, serviceError } from './kurrent-error.js';
import { streamNameBytes, uuidText } from './event-mapping.js';
import { persistent, shared } from './protocol.js';
import { kurrentStreamText, ledgerStreamName } from './stream-names.js';

import { allSource, exists, filterOfRow, notFound, settingsOf, sourceOf, startFromOf, type CreateReq, type DeleteReq, type GetInfoReq, type GroupRow, type ListReq, type Persistent, type ReadReq, type ReadResp, type ReplayParkedReq, type StoredFilter, type SubscriptionInfo, type UpdateReq } from './persistent-settings.js';
import { Connection, Group } from './persistent-group.js';
export interface PersistentSubscriptionsOptions {
  store: EventStore;
  tokens: TokenTable;
  tls: boolean;
  anonymousReads: AnonymousReads;
  stopping: AbortSignal;
}

export class PersistentSubscriptions {
  readonly #options: PersistentSubscriptionsOptions;
  /** The groups with consumers, by `source\0group`. */
  readonly #running = new Map<string, Group>();

  constructor(options: PersistentSubscriptionsOptions) {
    this.#options = options;
    options.stopping.addEventListener('abort', () => void this.#stopAll(new KurrentCallError(status.UNAVAILABLE, 'the server is stopping')));
  }

  get store(): EventStore {
    return this.#options.store;
  }

  #key(source: string, group: string): string {
    return `${source}\u0000${group}`;
  }

  idle(group: Group): void {
    if (this.#running.get(this.#key(group.source, group.row.group_name)) === group) this.#running.delete(this.#key(group.source, group.row.group_name));
    void group.drop();
  }

  async #stopAll(error?: unknown): Promise<void> {
    const groups = [...this.#running.values()];
    this.#running.clear();
    await Promise.all(groups.map((group) => group.drop(error)));
  }

  #principal(call: { metadata: Metadata }): Principal | null {
    return callerOf(call.metadata, this.#options.tokens, this.#options.tls);
  }

  /** Managing groups takes a role that writes; reading them (info, list, consuming) the log's read view. */
  #manager(call: { metadata: Metadata }): Principal {
    const principal = this.#principal(call);
    const refusal = writerRefusal(principal);
    if (refusal) throw KurrentCallError.refused(refusal);
    if (principal!.role === 'agent') {
      throw KurrentCallError.refused(new ApiError('API_FORBIDDEN', { role: principal!.role, allowed: ['operator', 'admin'] }, 'agents report their observations only; consumer groups are managed by operators and admins'));
    }
    return principal!;
  }

  #reader(call: { metadata: Metadata }): { principal: Principal | null; view: 'payloads' | 'envelopes' } {
    const principal = this.#principal(call);
    return { principal, view: readerView(principal, this.#options.anonymousReads) };
  }

  /** Where a group starts reading: a stream's version, or a log position; "end" is the end as it is now. */
  async #startAt(source: string, startFrom: string): Promise<number> {
    if (source !== allSource) return startFrom === '-1' ? ((await this.store.streamVersion(source)) ?? 0) + 1 : Number(startFrom) + 1;
    const commit = Number(/^C:(-?\d+)\/P:/.exec(startFrom)?.[1] ?? -1);
    return commit < 0 ? (await this.store.head()).position + 1 : Math.max(1, commit);
  }

  async #row(source: string, group: string): Promise<GroupRow | null> {
    const result = await sql<GroupRow>`SELECT source, group_name, settings, filter, checkpoint, start_at FROM kurrent_persistent_subscriptions WHERE source = ${source} AND group_name = ${group}`.execute(this.store.db);
    return result.rows[0] ?? null;
  }

  #unary<Req, Resp>(handler: (call: ServerUnaryCall<Req, Resp>) => Promise<Resp>) {
    return (call: ServerUnaryCall<Req, Resp>, callback: sendUnaryData<Resp>): void => {
      handler(call).then(
        (response) => callback(null, response),
        (error: unknown) => callback(serviceError(error) as Parameters<sendUnaryData<Resp>>[0]),
      );
    };
  }

  readonly create = this.#unary<CreateReq, InstanceType<Persistent['CreateResp']>>(async (call) => {
    this.#manager(call);
    const options = call.request.getOptions();
    if (!options) throw KurrentCallError.badRequest('options', 'are missing');
    const group = options.getGroupName();
    if (!group) throw KurrentCallError.badRequest('group_name', 'is empty');
    let source: string;
    let filter: StoredFilter | null = null;
    if (options.hasAll()) {
      source = allSource;
      const all = options.getAll()!;
      if (all.hasFilter()) {
        const given = all.getFilter()!;
        const on = given.hasStreamIdentifier() ? 'stream' : 'type';
        const expression = on === 'stream' ? given.getStreamIdentifier() : given.getEventType();
        filter = { on, prefixes: expression?.getPrefixList() ?? [], regex: expression?.getRegex() ?? '' };
        filterOfRow(filter);
      }
    } else source = ledgerStreamName(streamNameBytes(options.hasStream() ? options.getStream()!.getStreamIdentifier() : options.getStreamIdentifier()));
    const settings = settingsOf(options.getSettings(), startFromOf(options, options.getSettings()));
    const startAt = await this.#startAt(source, settings.startFrom);
    const inserted = await sql`
      INSERT INTO kurrent_persistent_subscriptions (source, group_name, settings, filter, start_at)
      VALUES (${source}, ${group}, ${JSON.stringify(settings)}::jsonb, ${filter ? JSON.stringify(filter) : null}::jsonb, ${startAt})
      ON CONFLICT (source, group_name) DO NOTHING`.execute(this.store.db);
    if (Number(inserted.numAffectedRows ?? 0) === 0) throw exists(source, group);
    return new persistent.CreateResp();
  });

  readonly update = this.#unary<UpdateReq, InstanceType<Persistent['UpdateResp']>>(async (call) => {
    this.#manager(call);
    const options = call.request.getOptions();
    if (!options) throw KurrentCallError.badRequest('options', 'are missing');
    const group = options.getGroupName();
    const source = options.hasAll() ? allSource : ledgerStreamName(streamNameBytes(options.hasStream() ? options.getStream()!.getStreamIdentifier() : options.getStreamIdentifier()));
    const settings = settingsOf(options.getSettings(), startFromOf(options, options.getSettings()));
    const startAt = await this.#startAt(source, settings.startFrom);
    // A new start resolves again; an unchanged one keeps where the group was created to start.
    const updated = await sql`
      UPDATE kurrent_persistent_subscriptions SET settings = ${JSON.stringify(settings)}::jsonb, updated_at = now(),
        start_at = CASE WHEN settings->>'startFrom' = ${settings.startFrom} THEN start_at ELSE ${startAt} END
      WHERE source = ${source} AND group_name = ${group}`.execute(this.store.db);
    if (Number(updated.numAffectedRows ?? 0) === 0) throw notFound(source, group);
    // The group's consumers are dropped (KurrentDB does the same): they reconnect to the new settings.
    const running = this.#running.get(this.#key(source, group));
    if (running) {
      this.#running.delete(this.#key(source, group));
      await running.drop(new KurrentCallError(status.UNAVAILABLE, 'the subscription group was updated', { exception: 'persistent-subscription-dropped', 'stream-name': source, 'group-name': group }));
    }
    return new persistent.UpdateResp();
  });

  readonly delete = this.#unary<DeleteReq, InstanceType<Persistent['DeleteResp']>>(async (call) => {
    this.#manager(call);
    const options = call.request.getOptions();
    const source = sourceOf(options);
    const group = options!.getGroupName();
    const running = this.#running.get(this.#key(source, group));
    if (running) {
      this.#running.delete(this.#key(source, group));
      await running.drop(new KurrentCallError(status.UNAVAILABLE, 'the subscription group was deleted', { exception: 'persistent-subscription-dropped', 'stream-name': source, 'group-name': group }));
    }
    const deleted = await sql`DELETE FROM kurrent_persistent_subscriptions WHERE source = ${source} AND group_name = ${group}`.execute(this.store.db);
    if (Number(deleted.numAffectedRows ?? 0) === 0) throw notFound(source, group);
    return new persistent.DeleteResp();
  });

  readonly replayParked = this.#unary<ReplayParkedReq, InstanceType<Persistent['ReplayParkedResp']>>(async (call) => {
    this.#manager(call);
    const options = call.request.getOptions();
    const source = sourceOf(options);
    const group = options!.getGroupName();
    if (!(await this.#row(source, group))) throw notFound(source, group);
    const limit = options!.hasStopAt() ? Number(options!.getStopAt()) : null;
    await sql`
      UPDATE kurrent_parked_messages SET replay = true WHERE (source, group_name, position) IN (
        SELECT source, group_name, position FROM kurrent_parked_messages WHERE source = ${source} AND group_name = ${group} AND NOT replay ORDER BY position
        ${limit === null ? sql`` : sql`LIMIT ${limit}`})`.execute(this.store.db);
    this.#running.get(this.#key(source, group))?.replayRequested();
    return new persistent.ReplayParkedResp();
  });

  readonly restartSubsystem = this.#unary<InstanceType<typeof shared.Empty>, InstanceType<typeof shared.Empty>>(async (call) => {
    this.#manager(call);
    await this.#stopAll(new KurrentCallError(status.UNAVAILABLE, 'the persistent subscription subsystem restarted', { exception: 'persistent-subscription-dropped' }));
    return new shared.Empty();
  });

  async #info(row: GroupRow): Promise<SubscriptionInfo> {
    const running = this.#running.get(this.#key(row.source, row.group_name));
    const { settings } = row;
    const all = row.source === allSource;
    const parked = await sql<{ count: string }>`SELECT count(*)::text AS count FROM kurrent_parked_messages WHERE source = ${row.source} AND group_name = ${row.group_name} AND NOT replay`.execute(this.store.db);
    const checkpoint = running?.checkpoint ?? (row.checkpoint === null ? null : Number(row.checkpoint));
    // The last event of the source the group knows of: what its reader saw, else what the source holds now.
    let known = running?.lastKnown ?? null;
    if (known === null) known = all ? (await this.store.head()).position || null : await this.store.streamVersion(row.source);
    const asText = (value: number | null, isPosition: boolean): string => (value === null ? '' : isPosition ? `C:${value}/P:${value}` : String(value));
    const info = new persistent.SubscriptionInfo()
      .setEventSource(all ? allSource : kurrentStreamText(row.source))
      .setGroupName(row.group_name)
      .setStatus(running ? 'Live' : 'Idle')
      .setAveragePerSecond(0)
      .setTotalItems(String(running?.totalItems ?? 0))
      .setCountSinceLastMeasurement('0')
      .setLastCheckpointedEventPosition(asText(checkpoint, all))
      .setLastKnownEventPosition(asText(known === null ? null : all ? known : known - 1, all))
      .setResolveLinkTos(settings.resolveLinks)
      .setStartFrom(settings.startFrom)
      .setMessageTimeoutMilliseconds(settings.messageTimeoutMs)
      .setExtraStatistics(settings.extraStatistics)
      .setMaxRetryCount(settings.maxRetryCount)
      .setLiveBufferSize(settings.liveBufferSize)
      .setBufferSize(settings.historyBufferSize)
      .setReadBatchSize(settings.readBatchSize)
      .setCheckPointAfterMilliseconds(settings.checkpointAfterMs)
      .setMinCheckPointCount(settings.minCheckpointCount)
      .setMaxCheckPointCount(settings.maxCheckpointCount)
      .setReadBufferCount(running?.readBufferCount ?? 0)
      .setLiveBufferCount('0')
      .setRetryBufferCount(running?.retryBufferCount ?? 0)
      .setTotalInFlightMessages(running?.outstanding ?? 0)
      .setOutstandingMessagesCount(running?.outstanding ?? 0)
      .setNamedConsumerStrategy(settings.consumerStrategy)
      .setMaxSubscriberCount(settings.maxSubscriberCount)
      .setParkedMessageCount(parked.rows[0]?.count ?? '0');
    info.setConnectionsList(
      (running?.connections ?? []).map((connection) => {
        const seconds = Math.max(1, (Date.now() - connection.started) / 1000);
        const entry = new persistent.SubscriptionInfo.ConnectionInfo()
          .setFrom(connection.from)
          .setUsername(connection.principal?.id ?? '$anonymous')
          .setAverageItemsPerSecond(Math.round(connection.totalItems / seconds))
          .setTotalItems(String(connection.totalItems))
          .setCountSinceLastMeasurement('0')
          .setAvailableSlots(connection.freeSlots)
          .setInFlightMessages(connection.inFlight)
          .setConnectionName(connection.name);
        if (settings.extraStatistics) {
          // KurrentDB's latency quintiles (milliseconds from hand-out to answer); this face records answers' times only.
          entry.setObservedMeasurementsList(['Mean', 'Median', 'Fastest', 'Quintile 1', 'Quintile 2', 'Quintile 3', 'Quintile 4', 'Quintile 5', '90%', '95%', '99%', '99.5%', '99.9%', 'Highest'].map((key) => new persistent.SubscriptionInfo.Measurement().setKey(key).setValue('0')));
        }
        return entry;
      }),
    );
    return info;
  }

  readonly getInfo = this.#unary<GetInfoReq, InstanceType<Persistent['GetInfoResp']>>(async (call) => {
    this.#reader(call);
    const options = call.request.getOptions();
    const source = sourceOf(options);
    const row = await this.#row(source, options!.getGroupName());
    if (!row) throw notFound(source, options!.getGroupName());
    return new persistent.GetInfoResp().setSubscriptionInfo(await this.#info(row));
  });

  readonly list = this.#unary<ListReq, InstanceType<Persistent['ListResp']>>(async (call) => {
    this.#reader(call);
    const options = call.request.getOptions();
    let source: string | null = null;
    if (options?.hasListForStream()) {
      const forStream = options.getListForStream()!;
      source = forStream.hasAll() ? allSource : ledgerStreamName(streamNameBytes(forStream.getStream()));
    }
    const rows = await sql<GroupRow>`
      SELECT source, group_name, settings, filter, checkpoint, start_at FROM kurrent_persistent_subscriptions ${source === null ? sql`` : sql`WHERE source = ${source}`} ORDER BY created_at, group_name`.execute(this.store.db);
    if (source !== null && rows.rows.length === 0) throw notFound(source, '');
    const response = new persistent.ListResp();
    response.setSubscriptionsList(await Promise.all(rows.rows.map((row) => this.#info(row))));
    return response;
  });

  /** PersistentSubscriptions.Read: the options, then acks and nacks; events and a confirmation back. */
  readonly read = (call: ServerDuplexStream<ReadReq, ReadResp>): void => {
    let connection: Connection | null = null;
    let group: Group | null = null;
    const fail = (error: unknown): void => {
      call.emit('error', serviceError(error));
    };
    const onMessage = async (request: ReadReq): Promise<void> => {
      if (request.hasOptions()) {
        if (connection) throw KurrentCallError.badRequest('options', 'come once, first');
        const { principal, view } = this.#reader(call);
        const options = request.getOptions()!;
        const source = options.hasAll() ? allSource : ledgerStreamName(streamNameBytes(options.getStreamIdentifier()));
        const name = options.getGroupName();
        const row = await this.#row(source, name);
        if (!row) throw notFound(source, name);
        const key = this.#key(source, name);
        group = this.#running.get(key) ?? null;
        if (!group) {
          group = new Group(this, row);
          this.#running.set(key, group);
        }
        const max = group.settings.maxSubscriberCount;
        if (max > 0 && group.connections.length >= max) {
          throw new KurrentCallError(status.FAILED_PRECONDITION, `Subscription group ${name} on stream ${source === allSource ? allSource : kurrentStreamText(source)} has reached its maximum of ${max} subscribers.`, {
            exception: 'maximum-subscribers-reached',
            'stream-name': source === allSource ? allSource : kurrentStreamText(source),
            'group-name': name,
          });
        }
        const connectionName = call.metadata.get('connection-name')[0];
        connection = new Connection(call, principal, view, Math.max(1, options.getBufferSize() || 10), options.getUuidOption()?.hasStructured() ?? false, typeof connectionName === 'string' ? connectionName : '', call.getPeer());
        call.write(new persistent.ReadResp().setSubscriptionConfirmation(new persistent.ReadResp.SubscriptionConfirmation().setSubscriptionId(`${source === allSource ? allSource : kurrentStreamText(source)}::${name}`)));
        group.add(connection);
        return;
      }
      if (!connection || !group) throw KurrentCallError.badRequest('options', 'must come first');
      const ids = (list: Array<import('./protocol.js').UUID>): string[] => list.map((id) => uuidText(id) ?? '').filter((id) => id.length > 0);
      if (request.hasAck()) group.ack(ids(request.getAck()!.getIdsList()));
      else if (request.hasNack()) {
        const nack = request.getNack()!;
        group.nack(ids(nack.getIdsList()), nack.getAction(), nack.getReason(), connection);
      }
    };
    // Messages are handled in order: an ack never overtakes the options it belongs to.
    let chain = Promise.resolve();
    call.on('data', (request: ReadReq) => {
      chain = chain.then(() => onMessage(request)).catch(fail);
    });
    const leave = (): void => {
      if (connection && group) group.close(connection);
    };
    call.on('end', leave);
    call.on('cancelled', leave);
    call.on('close', leave);
    call.on('error', () => undefined);
  };
}
