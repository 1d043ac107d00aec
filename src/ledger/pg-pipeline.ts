/**
 * The one file that reaches into pg's private internals: the group commit's pipelined write.
 *
 * Why it exists: pg has no public way to send two statements before one Sync, nor to keep a statement parsed once per
 * connection under a name of our own while binding it inside another query's sequence. Sending BEGIN, the settings,
 * the lock, the write and COMMIT as one extended-protocol sequence is what lets a group commit take one round trip
 * (and two on the long way instead of three); parsing the transaction's own statements once per connection took a
 * tenth of a one-event append's server time away. Both need pg's `Query#_getRows`, `Query#prepare` and the
 * connection's `parsedStatements` / `submittedNamedStatements`, which are not in pg's types (present in pg 8). A lost
 * connection's commit is resolved knowing its server process, pg's `Client#processID`, not in its types either.
 *
 * The quarantine: nothing else in the ledger touches a `_` field or pg's Connection messages. Every internal is
 * checked before it is used; where pg lacks one, `writeAndCommit` returns null (one-round-trip path) or sends COMMIT
 * in a round trip of its own, and the store falls back to pg's public API. Upgrading pg means reading this file.
 */
import pg from 'pg';
import { LedgerError } from './ledger-error.js';

/** The server process behind `client` (from its BackendKeyData), or null if pg does not keep it. */
export function backendProcessId(client: pg.PoolClient): number | null {
  return (client as unknown as { processID?: number | null }).processID ?? null;
}

/** What pg's Query does: Parse, Bind, Describe, then `_getRows` (Execute, Sync). Not in pg's types; present in pg 8 (checked before use). */
type QueryInternals = {
  _getRows?: (connection: pg.Connection, rows?: number) => void;
  prepare?: (connection: pg.Connection) => void;
  portal: string;
};
type ConnectionInternals = pg.Connection & { submittedNamedStatements?: Record<string, string>; parsedStatements?: Record<string, string> };

/**
 * A group commit's write and its COMMIT in one round trip: the write (the named statement, bound to this commit's
 * arrays), then COMMIT, in one extended-protocol sequence that ends in one Sync. If the write fails, the server skips
 * the COMMIT (it discards every message up to the Sync) and the transaction stays open, aborted, for the ROLLBACK.
 * pg has no public way to put two statements before one Sync: its Query sends Execute and Sync from `_getRows`, which
 * is replaced on this one query object; a pg without it gets the COMMIT in a round trip of its own.
 *
 * With `prelude` (statements without parameters, each answering at most a row), those run first in the same sequence:
 * the transaction's BEGIN, its settings and the lock, so the whole transaction is one round trip. The write's Parse
 * goes first of all, so the statement name pg records as parsed on the first ParseComplete is the write's own. Where
 * pg lacks the internals this needs, null is returned before anything is sent, and the caller takes its other path.
 * Returns the write's rows.
 */
export async function writeAndCommit(
  client: pg.PoolClient,
  statement: { name: string; text: string; values: unknown[] },
  prelude: readonly string[] = [],
): Promise<Array<Record<string, unknown>> | null> {
  const pgQuery = pg.Query.prototype as unknown as QueryInternals;
  const connection = (client as unknown as { connection?: ConnectionInternals }).connection;
  if (prelude.length > 0 && (typeof pgQuery._getRows !== 'function' || typeof pgQuery.prepare !== 'function' || !connection?.submittedNamedStatements || !connection.parsedStatements)) return null;
  const results = await new Promise<unknown>((resolve, reject) => {
    const query = new pg.Query({ name: statement.name, text: statement.text, values: statement.values }, (error, result) => (error ? reject(error) : resolve(result)));
    const internals = query as unknown as QueryInternals;
    if (typeof internals._getRows === 'function') {
      internals._getRows = (connection) => {
        // (pg's types still name a `more` argument that pg 8 no longer reads; the stream is corked until the Sync.)
        connection.execute({ portal: internals.portal }, true);
        connection.bind({ statement: parsedOnce(connection, 'COMMIT') }, true);
        connection.execute({}, true);
        connection.sync();
      };
    }
    if (prelude.length > 0) {
      const prepare = internals.prepare!.bind(query);
      internals.prepare = (connection) => {
        const named = connection as ConnectionInternals;
        if (named.parsedStatements![statement.name] === undefined && named.submittedNamedStatements![statement.name] === undefined) {
          connection.parse({ name: statement.name, text: statement.text, types: [] }, true);
          named.submittedNamedStatements![statement.name] = statement.text;
        }
        for (const text of prelude) {
          connection.bind({ statement: parsedOnce(connection, text) }, true);
          // Described, so a row it answers (the lock's void) comes with its columns, as pg's result parsing needs.
          connection.describe({ type: 'P', name: '' }, true);
          connection.execute({}, true);
        }
        prepare(connection);
      };
    }
    void client.query(query);
  });
  // Every statement of the sequence ran, so the ones parsed in it exist on this connection from now on.
  if (connection) confirmParsed(connection, prelude);
  const all = (Array.isArray(results) ? results : [results]) as pg.QueryResult[];
  const commands = all.map((result) => result.command);
  const write = all[prelude.length];
  if (commands.length === prelude.length + 1) {
    await client.query('COMMIT');
  } else if (commands[prelude.length + 1] !== 'COMMIT') {
    // A transaction the server had already aborted answers COMMIT with ROLLBACK: nothing was written.
    const answer = String(commands[prelude.length + 1]);
    throw new LedgerError('LEDGER_STORE_UNAVAILABLE', { operation: 'append', cause: `COMMIT answered ${answer}` }, `append transaction failed, nothing was committed: COMMIT answered ${answer}`);
  }
  return (write?.rows ?? []) as Array<Record<string, unknown>>;
}

/**
 * The transaction's own statements (BEGIN, its settings, the lock, COMMIT) are parsed once per connection under names
 * of their own, not at every append: a one-event append is mostly such statements, and parsing them was a tenth of its
 * time on the server. A name counts as parsed only once a sequence that parsed it has completed: a sequence that fails
 * earlier makes the server skip the rest, the Parse included, so the next use sends Close (not an error for a name that
 * does not exist) and Parse again.
 */
const parsedOnConnection = new WeakMap<object, Set<string>>();
const statementNames = new Map<string, string>();
const STATEMENT_NAMES_MAX = 64;

/** The name to bind for `text` on `connection`, sending its Close and Parse first unless it is known parsed there. */
function parsedOnce(connection: pg.Connection, text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    // The texts are a handful per store (its settings carry its timeout); past the cap, a text is parsed unnamed each time.
    if (statementNames.size >= STATEMENT_NAMES_MAX) {
      connection.parse({ name: '', text, types: [] }, true);
      return '';
    }
    name = `fleet-ledger-tx-${statementNames.size}`;
    statementNames.set(text, name);
  }
  if (!parsedOnConnection.get(connection)?.has(text)) {
    (connection as pg.Connection & { close(message: { type: 'S'; name: string }): void }).close({ type: 'S', name });
    connection.parse({ name, text, types: [] }, true);
  }
  return name;
}

function confirmParsed(connection: object, prelude: readonly string[]): void {
  let parsed = parsedOnConnection.get(connection);
  if (!parsed) parsedOnConnection.set(connection, (parsed = new Set()));
  for (const text of prelude) parsed.add(text);
  parsed.add('COMMIT');
}
