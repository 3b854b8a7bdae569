import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';

/**
 * Tables a refused request may change by design, left out of the comparison:
 * - `idempotency_keys`: a refused POST /rest/transfers stores its answer under its key, so that the same key
 *   replays the same refusal (docs/integrators/sandbox.md: refusals included);
 * - `login_throttle`: a refused sign-in or sign-up counts against the account and the address; that count is
 *   the protection against guessing;
 * - `card_token_uses`: the first use of a card token spends it whatever the outcome, so that one token cannot
 *   be replayed to probe the checks (docs/integrators/card-tokenization.md). Every other table (those of
 *   src/db/schema.ts, and any added later: the list is read from the database) must be exactly as it was
 *   after a 4xx.
 */
export const CHANGED_BY_REFUSALS = new Set(['idempotency_keys', 'login_throttle', 'card_token_uses']);

export type Fingerprint = Map<string, string>;

const tablesOf = new WeakMap<Db, Promise<string[]>>();

function tables(db: Db): Promise<string[]> {
  let names = tablesOf.get(db);
  if (!names) {
    names = sql<{ name: string }>`
      select table_name as name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`
      .execute(db)
      .then(({ rows }) =>
        rows
          .map((row) => row.name)
          .filter((name) => /^[a-z_][a-z0-9_]*$/.test(name) && !CHANGED_BY_REFUSALS.has(name)),
      );
    tablesOf.set(db, names);
  }
  return names;
}

/**
 * Every row of every table, as one digest per table (its row count and an md5 over its rows' text, in an
 * order of their own digests, so that physical order does not matter). The tables of the test are small, so
 * the whole takes one statement of a few milliseconds.
 */
export async function fingerprint(db: Db): Promise<Fingerprint> {
  const names = await tables(db);
  const digest = `count(*)::text || ':' || coalesce(md5(string_agg(md5(r::text), '' order by md5(r::text))), '')`;
  const parts = names.map((name) => `select '${name}' as name, ${digest} as digest from "${name}" r`);
  const { rows } = await sql<{ name: string; digest: string }>`${sql.raw(parts.join(' union all '))}`.execute(
    db,
  );
  return new Map(rows.map((row) => [row.name, row.digest]));
}

/** The tables whose rows differ between two fingerprints. */
export function changedTables(before: Fingerprint, after: Fingerprint): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((name) => before.get(name) !== after.get(name));
}

/**
 * Fingerprints one database around checked requests. The reading after a request is the reading before the
 * next, unless the test wrote to the database in between (setting up a case) and said so with `forget`.
 */
export class DatabaseWatch {
  readonly db: Db;
  #last: Fingerprint | undefined;

  constructor(db: Db) {
    this.db = db;
  }

  async before(): Promise<Fingerprint> {
    this.#last ??= await fingerprint(this.db);
    return this.#last;
  }

  async after(): Promise<Fingerprint> {
    this.#last = await fingerprint(this.db);
    return this.#last;
  }

  forget(): void {
    this.#last = undefined;
  }
}
