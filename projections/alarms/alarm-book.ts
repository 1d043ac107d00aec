/**
 * The alarms a batch opens and changes, kept in memory and written with one load and one upsert at the end.
 * A change to an alarm opened in an earlier batch is kept as a patch and merged over the stored row at flush;
 * a patch for an alarm that does not exist (an acknowledgement of an unknown id) is dropped.
 */
import type { Transaction } from 'kysely';
import { loadRows, upsertRows, type Row } from '../support/table.js';
import { alarmsTable } from './alarms-table.js';
import type { DynamicDatabase } from '../../src/ledger/index.js';

export class AlarmBook {
  readonly #rows = new Map<string, Row>();
  readonly #patches = new Map<string, Row>();

  open(row: Row): void {
    this.#rows.set(row.alarm_id as string, row);
  }

  update(alarmId: string, patch: Row): void {
    const row = this.#rows.get(alarmId);
    if (row) {
      Object.assign(row, patch);
      return;
    }
    this.#patches.set(alarmId, { ...this.#patches.get(alarmId), ...patch });
  }

  async flush(trx: Transaction<DynamicDatabase>): Promise<void> {
    if (this.#patches.size > 0) {
      for (const base of await loadRows(trx, alarmsTable, 'alarm_id', [...this.#patches.keys()])) {
        this.#rows.set(base.alarm_id as string, { ...base, ...this.#patches.get(base.alarm_id as string) });
      }
    }
    await upsertRows(trx, alarmsTable, [...this.#rows.values()]);
  }
}
