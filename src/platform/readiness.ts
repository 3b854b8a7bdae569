import type { Database } from '../db/database.ts';

/** Why a process is not ready: stopping, or its database does not answer. */
export type NotReadyReason = 'DRAINING' | 'DATABASE_UNAVAILABLE';

export type ReadinessState = { ready: true } | { ready: false; reason: NotReadyReason };

/** A database answer is trusted this long, so that probes from many balancers cost one ping a second at most. */
const DATABASE_CHECK_TTL_MS = 1000;

/**
 * Whether this process should be sent new requests: not once it was asked to stop (it keeps serving what still
 * arrives while the balancer notices), and not while its database does not answer within the health timeout.
 */
export class Readiness {
  readonly #database: Database;
  readonly #timeoutMs: number;
  #draining = false;
  #checked: { atMs: number; ok: boolean } | undefined;
  #checking: Promise<boolean> | undefined;

  constructor(database: Database, timeoutMs: number) {
    this.#database = database;
    this.#timeoutMs = timeoutMs;
  }

  /** From now on, not ready: the process is stopping. */
  drain(): void {
    this.#draining = true;
  }

  get draining(): boolean {
    return this.#draining;
  }

  async state(): Promise<ReadinessState> {
    if (this.#draining) return { ready: false, reason: 'DRAINING' };
    if (!(await this.#databaseAnswers())) return { ready: false, reason: 'DATABASE_UNAVAILABLE' };
    // Asked to stop while the ping ran.
    if (this.#draining) return { ready: false, reason: 'DRAINING' };
    return { ready: true };
  }

  #databaseAnswers(): Promise<boolean> {
    const checked = this.#checked;
    if (checked && performance.now() - checked.atMs < DATABASE_CHECK_TTL_MS)
      return Promise.resolve(checked.ok);
    // One ping in flight however many probes arrive meanwhile.
    this.#checking ??= this.#database
      .ping(this.#timeoutMs)
      .then(
        () => true,
        () => false,
      )
      .then((ok) => {
        this.#checked = { atMs: performance.now(), ok };
        this.#checking = undefined;
        return ok;
      });
    return this.#checking;
  }
}
