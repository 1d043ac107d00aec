/**
 * The alarms a batch opens and changes, kept in memory and written with one load and one upsert at the end.
 * A change to an alarm opened in an earlier batch is kept as a patch and merged over the stored row at flush;
 * a patch for an alarm that does not exist (an acknowledgement of an unknown id) is dropped.
 *
 * Every open and change is also noted with the event it came from (`at`), so the flush can give each alarm one
 * version per event that changed it (`alarms_versions`), with that event's position, however many events of the
 * batch touched it.
 */
import type { Transaction } from 'kysely';
import type { RecordedEvent } from '../../events/index.js';
import { loadRows, upsertRows, type Row } from '../support/table.js';
import { VersionRecorder } from '../support/versions.js';
import { alarmsTable } from './alarms-table.js';
import type { DynamicDatabase } from '../../src/ledger/index.js';

type EventPoint = Pick<RecordedEvent, 'position' | 'recordedAt'>;

/** One open or change of an alarm, with the event it came from. */
type AlarmChange = { event: EventPoint; open: Row } | { event: EventPoint; patch: Row };

export class AlarmBook {
  readonly #rows = new Map<string, Row>();
  readonly #patches = new Map<string, Row>();
  readonly #changes = new Map<string, AlarmChange[]>();
  #event: EventPoint | null = null;

  /** The event the opens and changes that follow come from. */
  at(event: EventPoint): void {
    this.#event = event;
  }

  open(row: Row): void {
    this.#rows.set(row.alarm_id as string, row);
    this.#note(row.alarm_id as string, { event: this.#current(), open: { ...row } });
  }

  update(alarmId: string, patch: Row): void {
    this.#note(alarmId, { event: this.#current(), patch: { ...patch } });
    const row = this.#rows.get(alarmId);
    if (row) {
      Object.assign(row, patch);
      return;
    }
    this.#patches.set(alarmId, { ...this.#patches.get(alarmId), ...patch });
  }

  #current(): EventPoint {
    if (!this.#event) throw new Error('an alarm changed outside an event (AlarmBook.at was not called)');
    return this.#event;
  }

  #note(alarmId: string, change: AlarmChange): void {
    let changes = this.#changes.get(alarmId);
    if (!changes) this.#changes.set(alarmId, (changes = []));
    changes.push(change);
  }

  async flush(trx: Transaction<DynamicDatabase>): Promise<void> {
    const bases = new Map<string, Row>();
    if (this.#patches.size > 0) {
      for (const base of await loadRows(trx, alarmsTable, 'alarm_id', [...this.#patches.keys()])) {
        bases.set(base.alarm_id as string, base);
        this.#rows.set(base.alarm_id as string, { ...base, ...this.#patches.get(base.alarm_id as string) });
      }
    }
    await upsertRows(trx, alarmsTable, [...this.#rows.values()]);
    // The versions: each alarm's changes replayed over its stored row (or from its opening), one look per event.
    const versions = new VersionRecorder(alarmsTable);
    for (const [alarmId, changes] of this.#changes) {
      let row: Row | null = null;
      const base = bases.get(alarmId);
      if (base && 'patch' in changes[0]!) {
        row = base;
        versions.known(base);
      }
      for (const change of changes) {
        if ('open' in change) row = { ...change.open };
        else if (row) row = { ...row, ...change.patch };
        else continue;
        versions.observe(row, change.event);
      }
    }
    await versions.write(trx);
  }
}
