import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/**
 * The sandbox's time is real time plus an offset kept in the database, so that every process on one database
 * agrees on it. Only `ewa sandbox advance` (and its /admin twin) moves it, forward; `ewa sandbox reset` puts it back
 * to 0. Production never reads it.
 */
export const SANDBOX_OFFSET_SETTING = 'sandbox_clock_offset_ms';

/**
 * When the demo data was last put back by a reset: a process that sees it change forgets what it remembered of the
 * records the reset replaced (the system ledger accounts' ids).
 */
export const SANDBOX_RESET_SETTING = 'sandbox_reset_at';

/** How often a server re-reads the offset: another process's advance shows within about this long. */
export const SANDBOX_CLOCK_REFRESH_MS = 1000;

export async function readSandboxOffsetMs(db: Db): Promise<number> {
  return (await readSandboxState(db)).offsetMs;
}

/** The offset and the mark of the last reset, in one read (a server does it every second). */
async function readSandboxState(db: Db): Promise<{ offsetMs: number; resetMark: string | undefined }> {
  const rows = await db
    .selectFrom('app_settings')
    .select(['key', 'value'])
    .where('key', 'in', [SANDBOX_OFFSET_SETTING, SANDBOX_RESET_SETTING])
    .execute();
  const setting = (key: string) => rows.find((row) => row.key === key)?.value;
  const offset = Number(setting(SANDBOX_OFFSET_SETTING) ?? 0);
  const mark = setting(SANDBOX_RESET_SETTING);
  return {
    offsetMs: Number.isSafeInteger(offset) && offset > 0 ? offset : 0,
    resetMark: mark === undefined ? undefined : JSON.stringify(mark),
  };
}

/** Raises the stored offset to `offsetMs`, never lowering it (a slower writer cannot take time back). */
export async function raiseSandboxOffsetMs(db: Db, offsetMs: number): Promise<number> {
  if (!Number.isSafeInteger(offsetMs))
    throw new RangeError(`offsetMs must be a whole number (got ${offsetMs})`);
  const { rows } = await sql<{ value: unknown }>`insert into app_settings (key, value)
    values (${SANDBOX_OFFSET_SETTING}, to_jsonb(${Math.max(0, offsetMs)}::bigint))
    on conflict (key) do update set value = to_jsonb(greatest((app_settings.value #>> '{}')::bigint,
      (excluded.value #>> '{}')::bigint)), updated_at = now()
    returning value`.execute(db);
  return Number(rows[0]?.value ?? 0);
}

/**
 * The money clock of one process in the sandbox: `now()` is the real clock plus the offset, read from a copy kept
 * in memory, so that asking the time costs no round trip. A server refreshes the copy every second; an advance in
 * this process moves it step by step itself (`hold`), and refreshing waits until it lets go, so that the copy never
 * goes back to a value the advance has passed.
 */
export class SandboxClock {
  readonly #db: Db;
  readonly #realNow: () => Date;
  #offsetMs = 0;
  #held = false;
  #resetMark: string | undefined;
  readonly #resetListeners: (() => void)[] = [];
  #timer: NodeJS.Timeout | undefined;

  private constructor(db: Db, realNow: () => Date) {
    this.#db = db;
    this.#realNow = realNow;
  }

  /** A clock with the offset as the database has it now. */
  static async open(db: Db, realNow: () => Date = () => new Date()): Promise<SandboxClock> {
    const clock = new SandboxClock(db, realNow);
    const state = await readSandboxState(db);
    clock.#offsetMs = state.offsetMs;
    clock.#resetMark = state.resetMark;
    return clock;
  }

  readonly now = (): Date => new Date(this.#realNow().getTime() + this.#offsetMs);

  readonly realNow = (): Date => this.#realNow();

  get offsetMs(): number {
    return this.#offsetMs;
  }

  /** Sets the copy in memory and keeps refreshing from overwriting it until `release`. */
  hold(offsetMs: number): void {
    this.#held = true;
    this.#offsetMs = offsetMs;
  }

  /** Ends a hold; the copy is as the holder left it, which is what it stored. */
  release(offsetMs: number): void {
    this.#offsetMs = offsetMs;
    this.#held = false;
  }

  /** Runs `listener` whenever a reset (by any process) is noticed. */
  onReset(listener: () => void): void {
    this.#resetListeners.push(listener);
  }

  /**
   * Re-reads the offset, and whether the demo was reset meanwhile (then tells the listeners); a failed read keeps
   * the copy (the next one will do).
   */
  async refresh(): Promise<void> {
    try {
      const { offsetMs, resetMark } = await readSandboxState(this.#db);
      if (resetMark !== this.#resetMark) {
        this.#resetMark = resetMark;
        for (const listener of this.#resetListeners) listener();
      }
      if (!this.#held) this.#offsetMs = offsetMs;
    } catch {
      // The database is away for a moment: the time goes on from the offset last read.
    }
  }

  /** Refreshes every `intervalMs` until `stop`; the timer never keeps the process alive. */
  startRefreshing(intervalMs = SANDBOX_CLOCK_REFRESH_MS): void {
    if (this.#timer) return;
    const tick = () => {
      void this.refresh().finally(() => {
        if (this.#timer) this.#timer = setTimeout(tick, intervalMs).unref();
      });
    };
    this.#timer = setTimeout(tick, intervalMs).unref();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
