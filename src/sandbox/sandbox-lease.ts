import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { serviceUnavailable } from '../errors/service-unavailable.ts';

const LEASE_SETTING = 'sandbox_clock_lease';
/** This process, as lease holders name it: on the embedded database, a lease of any other process is a dead one's. */
const PROCESS_ID = randomUUID();
/**
 * A holder renews its lease between steps, so one lapses only when its process died or one step (a payroll of many
 * workers) took this long; then another advance may take over, and the scheduled runs still keep each job's run once.
 */
export const SANDBOX_LEASE_MS = 2 * 60_000;

/**
 * The right to move the sandbox's time or reset it: one advance or reset at a time, across every process on the
 * database, so that no two walk through time side by side. A row of app_settings with its holder and expiry rather
 * than a lock held in a transaction: it outlives the many transactions of the jobs an advance runs, and a
 * transaction left open that long would be ended as idle (session-limits.ts). Times are real time: a lease is about
 * processes, not about the sandbox's calendar.
 */
export class SandboxLease {
  readonly #db: Db;
  readonly #holder: string;
  readonly #realNow: () => Date;

  private constructor(db: Db, holder: string, realNow: () => Date) {
    this.#db = db;
    this.#holder = holder;
    this.#realNow = realNow;
  }

  /**
   * Takes the lease, or refuses with 503 SERVICE_UNAVAILABLE while another holder's is alive. `soleProcess` (the
   * embedded database, which one process opens at a time) takes over a lease another process left at once.
   */
  static async take(
    db: Db,
    options: { realNow: () => Date; soleProcess: boolean; what: string },
  ): Promise<SandboxLease> {
    const holder = randomUUID();
    const now = options.realNow();
    const value = leaseValue(holder, options.what, now);
    const { rows } = await sql<{ key: string }>`insert into app_settings (key, value)
      values (${LEASE_SETTING}, ${JSON.stringify(value)}::jsonb)
      on conflict (key) do update set value = excluded.value, updated_at = now()
      where (app_settings.value ->> 'expires_at')::timestamptz <= ${now.toISOString()}::timestamptz
        or (${options.soleProcess} and app_settings.value ->> 'process' <> ${PROCESS_ID})
      returning key`.execute(db);
    if (rows.length === 0) {
      const held = await db
        .selectFrom('app_settings')
        .select('value')
        .where('key', '=', LEASE_SETTING)
        .executeTakeFirst();
      const { what, expires_at: until } = (held?.value ?? {}) as { what?: string; expires_at?: string };
      throw serviceUnavailable(
        `A sandbox ${what ?? 'advance'} is running; try again when it has finished. Nothing was done. (Its hold ` +
          `lapses at ${until ?? 'once it ends'} if its process has died.)`,
      );
    }
    return new SandboxLease(db, holder, options.realNow);
  }

  /** Extends the lease; throws when another holder took it over, so the work stops rather than run beside it. */
  async renew(): Promise<void> {
    const expiresAt = new Date(this.#realNow().getTime() + SANDBOX_LEASE_MS).toISOString();
    const { rows } = await sql<{ key: string }>`update app_settings
      set value = jsonb_set(value, '{expires_at}', to_jsonb(${expiresAt}::text)), updated_at = now()
      where key = ${LEASE_SETTING} and value ->> 'holder' = ${this.#holder}
      returning key`.execute(this.#db);
    if (rows.length === 0)
      throw new Error('the sandbox lease lapsed and was taken over: this run stopped where it was');
  }

  async release(): Promise<void> {
    await sql`delete from app_settings where key = ${LEASE_SETTING} and value ->> 'holder' = ${this.#holder}`.execute(
      this.#db,
    );
  }
}

function leaseValue(holder: string, what: string, now: Date) {
  return {
    holder,
    process: PROCESS_ID,
    what,
    expires_at: new Date(now.getTime() + SANDBOX_LEASE_MS).toISOString(),
  };
}
