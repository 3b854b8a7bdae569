import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';
import type { OutboxTopic } from './outbox-message.ts';

/** A message claimed for sending. */
export interface ClaimedMessage {
  id: string;
  topic: OutboxTopic;
  subjectId: string;
  payload: Record<string, unknown>;
  createdAt: Date;
  /** 1 on the first try. */
  attempt: number;
}

/** How one topic's messages leave: `send` talks to the outside; the rest run in the transaction that records it. */
export interface OutboxHandler {
  topic: OutboxTopic;
  /** Sends the message (its id is the receiver's idempotency key) and answers what the receiver said. */
  send(message: ClaimedMessage): Promise<Record<string, unknown>>;
  /** Applies the receiver's answer, in the transaction that marks the message sent (once, however often sent). */
  sent(tx: Tx, message: ClaimedMessage, result: Record<string, unknown>, at: Date): Promise<void>;
  /** The reason the receiver refused for good, or undefined when a retry may succeed. */
  refusalOf(error: unknown): string | undefined;
  /** Applies a refusal for good, in the transaction that closes the message. */
  refused(tx: Tx, message: ClaimedMessage, reason: string, at: Date): Promise<void>;
}

export interface OutboxLogger {
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
}

export interface OutboxDispatcherOptions {
  db: Db;
  handlers: readonly OutboxHandler[];
  now: () => Date;
  /** In [0, 1): the jitter of the backoff (tests give a fixed one). */
  random: () => number;
  logger: OutboxLogger;
  /** A claimed message is this process's to send until then; a process that dies lets it go after it. */
  leaseMs: number;
  /** A send that takes longer is given up (and retried later); shorter than the lease. */
  sendTimeoutMs: number;
  /** Messages claimed in one statement. */
  batchSize: number;
  /** Sends in flight at once in this process. */
  concurrency: number;
  /** The first retry waits about this long, each next one twice as long, up to backoffMaxMs. */
  backoffBaseMs: number;
  backoffMaxMs: number;
}

export interface DispatchReport {
  sent: number;
  retried: number;
  refused: number;
}

/** Rounds of claims one dispatchDue makes at most: bounded work per call, the rest waits for the next. */
const ROUNDS_MAX = 1_000;

/**
 * Sends what the outbox holds, after the transactions that wrote it committed. Each process runs one: it claims
 * due messages with `FOR UPDATE SKIP LOCKED` and a lease (so processes never claim the same message, and a
 * message whose process died is claimed again once its lease has passed), sends each outside any transaction,
 * then records the outcome in a transaction of its own. The receiver sees each message at least once, always with
 * the message's id as idempotency key; the books apply its answer once (`sent_at` is set once). A failure is
 * retried with exponential backoff and jitter, without end: a payment the receiver may have taken must never be
 * given up by us, only refused by it.
 */
export class OutboxDispatcher {
  readonly #options: OutboxDispatcherOptions;
  readonly #handlers: ReadonlyMap<OutboxTopic, OutboxHandler>;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> = Promise.resolve();
  #stopped = false;
  #started = false;
  #again = false;

  constructor(options: OutboxDispatcherOptions) {
    if (options.sendTimeoutMs >= options.leaseMs)
      throw new RangeError(
        'the send timeout must be shorter than the lease, or two processes could send at once',
      );
    this.#options = options;
    this.#handlers = new Map(options.handlers.map((handler) => [handler.topic, handler]));
  }

  /** Sends every message due by `now` (the clock's now when absent); resolves when none is left to claim. */
  async dispatchDue(now?: Date): Promise<DispatchReport> {
    const report: DispatchReport = { sent: 0, retried: 0, refused: 0 };
    for (let round = 0; round < ROUNDS_MAX && !this.#stopped; round++) {
      const at = now ?? this.#options.now();
      const claimed = await this.#claim(at);
      if (claimed.length === 0) break;
      await forEachAtMost(claimed, this.#options.concurrency, async (message) => {
        const outcome = await this.#deliver(message, now);
        report[outcome]++;
      });
    }
    return report;
  }

  /** Polls every `pollMs`; `nudge` runs a round at once (after a commit that wrote messages). */
  start(pollMs: number): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    const tick = () => {
      this.#timer = setTimeout(() => {
        this.nudge();
        tick();
      }, pollMs);
      this.#timer.unref();
    };
    tick();
    this.nudge();
  }

  /** Once started: dispatches now, or once more after the round in flight ends. Never throws. */
  nudge(): void {
    if (!this.#started || this.#stopped) return;
    if (this.#again) return;
    this.#again = true;
    this.#running = this.#running.then(async () => {
      this.#again = false;
      try {
        await this.dispatchDue();
      } catch (error) {
        this.#options.logger.error(
          { err: error },
          'outbox dispatch failed; it is tried again on the next poll',
        );
      }
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  async #claim(at: Date): Promise<ClaimedMessage[]> {
    const { leaseMs, batchSize } = this.#options;
    const now = at.toISOString();
    const leasedUntil = new Date(at.getTime() + leaseMs).toISOString();
    const { rows } = await sql<{
      id: string;
      topic: OutboxTopic;
      subject_id: string;
      payload: Record<string, unknown>;
      created_at: Date;
      attempts: number;
    }>`update outbox o set leased_until = ${leasedUntil}::timestamptz, attempts = o.attempts + 1
      where o.id in (select id from outbox
        where sent_at is null and due_at <= ${now}::timestamptz
          and (leased_until is null or leased_until <= ${now}::timestamptz)
        order by due_at, id limit ${batchSize}
        for update skip locked)
      returning o.id, o.topic, o.subject_id, o.payload, o.created_at, o.attempts`.execute(this.#options.db);
    return rows.map((row) => ({
      id: row.id,
      topic: row.topic,
      subjectId: row.subject_id,
      payload: row.payload,
      createdAt: new Date(row.created_at),
      attempt: row.attempts,
    }));
  }

  async #deliver(message: ClaimedMessage, now: Date | undefined): Promise<keyof DispatchReport> {
    const handler = this.#handlers.get(message.topic);
    if (!handler) throw new Error(`no outbox handler for topic ${message.topic}`);
    let result: Record<string, unknown>;
    try {
      result = await withTimeout(handler.send(message), this.#options.sendTimeoutMs);
    } catch (error) {
      const refusal = handler.refusalOf(error);
      if (refusal !== undefined) {
        await this.#close(
          message,
          { refused: refusal },
          (tx, at) => handler.refused(tx, message, refusal, at),
          now,
        );
        return 'refused';
      }
      await this.#retryLater(message, error, now);
      return 'retried';
    }
    await this.#close(message, result, (tx, at) => handler.sent(tx, message, result, at), now);
    return 'sent';
  }

  /** Marks the message sent and applies its outcome, once: a second close (a message sent twice) changes nothing. */
  async #close(
    message: ClaimedMessage,
    result: Record<string, unknown>,
    apply: (tx: Tx, at: Date) => Promise<void>,
    now: Date | undefined,
  ): Promise<void> {
    const at = now ?? this.#options.now();
    await withTransaction(this.#options.db, async (tx) => {
      const { rows } =
        await sql`update outbox set sent_at = ${at.toISOString()}::timestamptz, result = ${JSON.stringify(result)}::jsonb,
          leased_until = null, last_error = null
        where id = ${message.id}::uuid and sent_at is null returning id`.execute(tx);
      if (rows.length === 1) await apply(tx, at);
    });
  }

  async #retryLater(message: ClaimedMessage, error: unknown, now: Date | undefined): Promise<void> {
    const at = now ?? this.#options.now();
    const delayMs = backoffMs(message.attempt, this.#options);
    const text = error instanceof Error ? error.message : String(error);
    this.#options.logger.warn(
      {
        outboxId: message.id,
        topic: message.topic,
        attempt: message.attempt,
        retryInMs: delayMs,
        err: error,
      },
      'outbox message not sent; it will be retried',
    );
    await sql`update outbox set due_at = ${new Date(at.getTime() + delayMs).toISOString()}::timestamptz,
        leased_until = null, last_error = ${text.slice(0, 1000)}
      where id = ${message.id}::uuid and sent_at is null`.execute(this.#options.db);
  }
}

/** Exponential backoff with equal jitter: half the step fixed, half random, so retries of many spread out. */
export function backoffMs(
  attempt: number,
  options: Pick<OutboxDispatcherOptions, 'backoffBaseMs' | 'backoffMaxMs' | 'random'>,
): number {
  const step = Math.min(options.backoffMaxMs, options.backoffBaseMs * 2 ** Math.min(attempt - 1, 40));
  return Math.round(step / 2 + (step / 2) * options.random());
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function forEachAtMost<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(lanes);
}
