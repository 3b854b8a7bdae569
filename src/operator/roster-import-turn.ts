import { sql } from 'kysely';
import type { Database, Db } from '../db/database.ts';
import { AppError } from '../errors/app-error.ts';

/** The database a roster import runs on: its kind says how an organization's turn to import is held. */
export type RosterDatabase = Pick<Database, 'db' | 'kind'>;

/** What a roster import needs of the organization whose turn it takes. */
interface TurnTaker {
  id: string;
  name: string;
}

/**
 * An organization's turn to import its roster: one import of an organization at a time, a second refused at once.
 * Each batch of an import is a transaction of its own, so two files of one organization written at once would mix
 * their lines batch by batch, and who is created or which email wins would depend on timing. `take` throws
 * ROSTER_IMPORT_RUNNING when another import holds the turn, and returns what gives it back.
 */
export interface RosterImportTurns {
  take(organization: TurnTaker): Promise<() => Promise<void>>;
}

function importRunning(organization: TurnTaker): AppError {
  return new AppError('ROSTER_IMPORT_RUNNING', {
    detail:
      `A roster import of organization ${organization.name} (${organization.id}) is already running; ` +
      'import this file when it has finished.',
  });
}

/**
 * On PostgreSQL: a session-level advisory lock of the import's own connection, tried, never waited for. Session
 * rather than transaction level because it must span the import's many transactions; a lock rather than a row
 * claim because a process that dies mid-import closes its connection, and the lock ends with it. Outside the row
 * lock order (db/lock-order.ts), as the idempotency keys' locks are: nothing ever waits for it.
 */
function sessionTurns(session: Db): RosterImportTurns {
  return {
    async take(organization) {
      const key = sql`hashtextextended(${`roster_import:${organization.id}`}, 0)`;
      const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}) as locked`.execute(
        session,
      );
      if (!rows[0]?.locked) throw importRunning(organization);
      return async () => {
        await sql`select pg_advisory_unlock(${key})`.execute(session);
      };
    },
  };
}

/**
 * The organizations importing in this process. The embedded database is opened by one process alone
 * (db/data-dir-lock.ts), and a CLI command beside its server runs in that server, so this process sees every
 * import of it. Organization ids are random UUIDs, so two embedded databases of one process (tests) never share one.
 */
const importingHere = new Set<string>();

const processTurns: RosterImportTurns = {
  async take(organization) {
    if (importingHere.has(organization.id)) throw importRunning(organization);
    importingHere.add(organization.id);
    return async () => {
      importingHere.delete(organization.id);
    };
  },
};

/**
 * Runs a roster import with the handle its statements go through and the turns it takes. On PostgreSQL that is one
 * connection of the pool for the whole import, the connection its advisory lock lives on; the embedded database
 * has one session, which the import must not keep from every other request, so its statements take turns on it as
 * any others do.
 */
export function withRosterImportSession<T>(
  database: RosterDatabase,
  work: (db: Db, turns: RosterImportTurns) => Promise<T>,
): Promise<T> {
  if (database.kind === 'pglite') return work(database.db, processTurns);
  return database.db.connection().execute((session) => work(session, sessionTurns(session)));
}
