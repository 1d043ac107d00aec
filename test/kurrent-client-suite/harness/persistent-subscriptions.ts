/**
 * Makes several persistent subscriptions at once for the suite's list and info tests: one per settings change, each
 * with its stream (or `$all`) and group name from the index, created in order; returns what was created.
 */
import {
  persistentSubscriptionToAllSettingsFromDefaults,
  persistentSubscriptionToStreamSettingsFromDefaults,
  type EventStoreDBClient,
  type PersistentSubscriptionToAllSettings,
  type PersistentSubscriptionToStreamSettings,
} from '@eventstore/db-client';

export type CreatedPS = [streamName: string, groupName: string, settings: PersistentSubscriptionToStreamSettings];
export type CreatedPSToAll = [streamName: '$all', groupName: string, settings: PersistentSubscriptionToAllSettings];

export const createManyPs =
  (client: EventStoreDBClient) =>
  async (streamName: (i: number) => string, groupName: (i: number) => string, changes: Array<Partial<PersistentSubscriptionToStreamSettings>>): Promise<CreatedPS[]> => {
    const created: CreatedPS[] = [];
    for (const [index, change] of changes.entries()) {
      const entry: CreatedPS = [streamName(index), groupName(index), persistentSubscriptionToStreamSettingsFromDefaults(change)];
      await client.createPersistentSubscriptionToStream(...entry);
      created.push(entry);
    }
    return created;
  };

export const createManyPsToAll =
  (client: EventStoreDBClient) =>
  async (groupName: (i: number) => string, changes: Array<Partial<PersistentSubscriptionToAllSettings>>): Promise<CreatedPSToAll[]> => {
    const created: CreatedPSToAll[] = [];
    for (const [index, change] of changes.entries()) {
      const entry: CreatedPSToAll = ['$all', groupName(index), persistentSubscriptionToAllSettingsFromDefaults(change)];
      await client.createPersistentSubscriptionToAll(entry[1], entry[2]);
      created.push(entry);
    }
    return created;
  };
