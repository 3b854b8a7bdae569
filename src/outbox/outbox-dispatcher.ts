import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { isDatabaseUnavailable } from '../db/database-unavailable.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';
import { claimCandidates } from './claim-candidates.ts';
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

/** A message and what its receiver answered. */
export interface SentMessage {
  message: ClaimedMessage;
  result: Record<string, unknown>;
}

/** A message its receiver refused for good, and why. */
export interface RefusedMessage {
  message: ClaimedMessage;
  reason: string;
}

/**
 * How one topic's messages leave: `send` talks to the outside, one message at a time; `sent` and `refused` apply
 * the answers of several messages together, in the transaction that marks them sent (each message once, however
 * often it was sent).
 */
export interface OutboxHandler {
  topic: OutboxTopic;
  /**
   * Sends the message (its id is the receiver's idempotency key) and answers what the receiver said; `at` is the
   * instant the dispatcher sends as of.
   */
  send(message: ClaimedMessage, at: Date): Promise<Record<string, unknown>>;
  sent(tx: Tx, answered: readonly SentMessage[], at: Date): Promise<void>;
  /** The reason the receiver refused for good, or undefined when a retry may succeed. */
  refusalOf(error: unknown): string | undefined;
  refused(tx: Tx, refusals: readonly RefusedMessage[], at: Date): Promise<void>;
}

export interface OutboxLogger {
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
}

export interface OutboxDispatcherOptions {
  db: Db;
  /** The topics this dispatcher sends: it claims no other (each kind of receiver has its own pace and timeouts). */
  handlers: readonly OutboxHandler[];
  /**
   * Messages of one subject leave in `sequence` order, each once the one before it has left the outbox (delivered
   * or given up): webhook deliveries, whose subject is an endpoint and a resource.
   */
  inOrderBySubject?: boolean;
  /**
   * At most `atOnce` messages of one receiver (the payload's `key`) claimed or being sent at once in this process,
   * so that one slow receiver cannot take every lane. With inOrderBySubject, a message must name its receiver (one
   * without the key is never claimed), and the claim finds receivers through an index on the key (migration 0038's
   * for webhook deliveries; without one it still claims the same messages, reading more rows).
   */
  perReceiver?: { key: string; atOnce: number };
  /**
   * A message's `createdAt` becomes the instant of its first claim, in real time (`realNow`): how long it has been
   * tried, whenever it was written (webhooks give up a window after their first try).
   */
  createdAtFirstClaim?: boolean;
  now: () => Date;
  /**
   * Real time, for leases (default: the system clock): a lease says how long a process may still be sending, which
   * the sandbox's clock (`now`, which jumps ahead when it is advanced) cannot measure.
   */
  realNow?: () => Date;
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

/** How sending one message went. */
type Delivery =
  | { kind: 'sent'; message: ClaimedMessage; result: Record<string, unknown> }
  | { kind: 'refused'; message: ClaimedMessage; reason: string }
  | { kind: 'retried'; message: ClaimedMessage; error: unknown }
  /** Not sent: it waited for a lane so long that its lease could end before an answer (claimed again, not counted). */
  | { kind: 'released'; message: ClaimedMessage };

/** How long a nudge waits for other commits to send with it: the lag it adds to a payment, at most. */
const NUDGE_GATHER_MS = 20;

const systemClock = () => new Date();

/** Claims one dispatchDue makes at most: bounded work per call, the rest waits for the next. */
const CLAIMS_MAX = 1_000;

/**
 * Sends what the outbox holds, after the transactions that wrote it committed. Each process runs one: it claims
 * due messages with `FOR UPDATE SKIP LOCKED` and a lease (so processes never claim the same message, and a
 * message whose process died is claimed again once its lease has passed), sends each outside any transaction,
 * then records the outcomes of the sends that ended together, in one transaction (and the retries in one statement)
 * before it claims again. A send starts only while an answer can still come within the lease; the rest is released. The receiver sees each message at least once, always with
 * the message's id as idempotency key; the books apply its answer once (the transaction that applies it deletes
 * the row, and applies nothing if another process deleted it first). A failure is
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
  /** Nudges whose gathering time has ended: a dispatch in flight claims again when this moved since its claim. */
  #nudges = 0;
  #nudgeTimer: NodeJS.Timeout | undefined;
  #nudgeWaiters: PromiseWithResolvers<void> | undefined;

  constructor(options: OutboxDispatcherOptions) {
    if (options.sendTimeoutMs >= options.leaseMs)
      throw new RangeError(
        'the send timeout must be shorter than the lease, or two processes could send at once',
      );
    this.#options = options;
    this.#handlers = new Map(options.handlers.map((handler) => [handler.topic, handler]));
  }

  /**
   * Sends every message due by `now` (the clock's now when absent); resolves when none is left to claim and every
   * send has ended. Lanes never wait for each other: a lane that is free takes the next claimed message, and when
   * none is left the answers so far are recorded and more is claimed, so a receiver that hangs holds its own lanes
   * only (and with perReceiver, at most that many of them, counting its sends still in flight).
   */
  async dispatchDue(now?: Date): Promise<DispatchReport> {
    const report: DispatchReport = { sent: 0, retried: 0, refused: 0 };
    const { leaseMs, sendTimeoutMs, concurrency, batchSize } = this.#options;
    const receiverKey = this.#options.perReceiver?.key;
    const sendsFreeClaims = this.#options.inOrderBySubject || receiverKey !== undefined;
    /** Claimed and not yet started, each with the last instant it may start and still answer within its lease. */
    const waiting: { message: ClaimedMessage; lastStartMs: number }[] = [];
    const sending = new Set<Promise<void>>();
    /** Messages waiting or being sent, by receiver: the claim counts them against perReceiver. */
    const busy = new Map<string, number>();
    const receiverOf = (message: ClaimedMessage) => String(message.payload[receiverKey ?? ''] ?? '');
    const ended: Delivery[] = [];
    const recordEnded = async () => {
      const deliveries = ended.splice(0);
      if (deliveries.length === 0) return;
      await this.#record(deliveries, now ?? this.#options.now());
      for (const delivery of deliveries) if (delivery.kind !== 'released') report[delivery.kind]++;
    };
    const end = (delivery: Delivery) => {
      ended.push(delivery);
      endedCount++;
      const receiver = receiverOf(delivery.message);
      busy.set(receiver, (busy.get(receiver) ?? 1) - 1);
    };
    /** Until the other sends end, a nudge comes, or NUDGE_GATHER_MS passes: sends ending close together act once. */
    const gathered = () => Promise.race([Promise.all(sending), this.#nudged(), delay(NUDGE_GATHER_MS)]);
    let claims = 0;
    let nudgesAtClaim = this.#nudges;
    let endedCount = 0;
    let endedAtClaim = 0;
    let releasedCount = 0;
    let releasedAtClaim = 0;
    /** The last claim took all it could, and nothing since (a send ending, a nudge) can have made more due. */
    let drained = false;
    try {
      for (;;) {
        while (waiting.length > 0 && sending.size < concurrency) {
          const next = waiting.shift()!;
          if (this.#stopped || performance.now() >= next.lastStartMs) {
            end({ kind: 'released', message: next.message });
            releasedCount++;
            continue;
          }
          const send: Promise<void> = this.#deliver(next.message, now ?? this.#options.now()).then(
            (delivery) => {
              sending.delete(send);
              end(delivery);
            },
          );
          sending.add(send);
        }
        const mayClaim = !this.#stopped && claims < CLAIMS_MAX;
        if (waiting.length === 0 && sending.size < concurrency && !drained && mayClaim) {
          // What ended is recorded first: a message's successor in order is claimable once it left the outbox.
          await recordEnded();
          nudgesAtClaim = this.#nudges;
          endedAtClaim = endedCount;
          releasedAtClaim = releasedCount;
          const claimed = await this.#claim(now ?? this.#options.now(), busy);
          claims++;
          const lastStartMs = performance.now() + leaseMs - sendTimeoutMs;
          for (const message of claimed) {
            waiting.push({ message, lastStartMs });
            busy.set(receiverOf(message), (busy.get(receiverOf(message)) ?? 0) + 1);
          }
          // Fewer than a batch: every message claimable now was claimed.
          drained = claimed.length < batchSize;
          continue;
        }
        // Since that claim began, a commit nudged, or a send ended that may free its successor or its receiver's lane.
        // A message released for want of a lane in time is claimable again too.
        const freed = (sendsFreeClaims && endedCount !== endedAtClaim) || releasedCount !== releasedAtClaim;
        const nudged = this.#nudges !== nudgesAtClaim;
        if (drained && mayClaim && (freed || nudged)) {
          // Sends that end close together share one claim (each ranks every due row): it waits for the others to
          // end, a nudge, or NUDGE_GATHER_MS, whichever comes first.
          if (!nudged && sending.size > 0) await gathered();
          drained = false;
          continue;
        }
        if (sending.size === 0 && waiting.length === 0) break;
        if (drained && ended.length > 0) {
          // Nothing to claim: what has ended is recorded now rather than after the slowest send, once the rest has
          // ended too or NUDGE_GATHER_MS has passed (one transaction for sends that end close together).
          await gathered();
          await recordEnded();
          continue;
        }
        await Promise.race([...sending, this.#nudged()]);
      }
    } finally {
      await Promise.all(sending);
      for (const { message } of waiting.splice(0)) end({ kind: 'released', message });
      await recordEnded();
    }
    return report;
  }

  /** Resolves at the next nudge (after its gathering time), so that a dispatch waiting on slow sends claims anew. */
  #nudged(): Promise<void> {
    this.#nudgeWaiters ??= Promise.withResolvers<void>();
    return this.#nudgeWaiters.promise;
  }

  /** Polls every `pollMs`; `nudge` dispatches soon (after a commit that wrote messages). */
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

  /**
   * Once started: claims after NUDGE_GATHER_MS, once for all the nudges of that time (a dispatch in flight claims
   * again then, while its sends go on; otherwise a new one starts). Under load the commits of that window then share
   * one claim and one closing transaction, instead of one each. Never throws.
   */
  nudge(): void {
    if (!this.#started || this.#stopped) return;
    if (this.#nudgeTimer === undefined) {
      this.#nudgeTimer = setTimeout(() => {
        this.#nudgeTimer = undefined;
        this.#nudges++;
        this.#nudgeWaiters?.resolve();
        this.#nudgeWaiters = undefined;
      }, NUDGE_GATHER_MS);
      this.#nudgeTimer.unref();
    }
    if (this.#again) return;
    this.#again = true;
    this.#running = this.#running.then(async () => {
      await new Promise((resolve) => setTimeout(resolve, NUDGE_GATHER_MS));
      this.#again = false;
      try {
        await this.dispatchDue();
      } catch (error) {
        // The database away is said once per poll as a warning; anything else is an error with its stack.
        if (isDatabaseUnavailable(error))
          this.#options.logger.warn(
            { reason: (error as Error).message },
            'outbox dispatch failed; it is tried again on the next poll',
          );
        else
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
    clearTimeout(this.#nudgeTimer);
    this.#nudgeWaiters?.resolve();
    this.#nudgeWaiters = undefined;
    await this.#running;
  }

  /** Claims what is due; `busy` counts, by receiver, the messages this dispatch holds already (perReceiver). */
  async #claim(at: Date, busy: ReadonlyMap<string, number>): Promise<ClaimedMessage[]> {
    const { leaseMs, batchSize } = this.#options;
    const now = at.toISOString();
    const real = (this.#options.realNow ?? systemClock)();
    const realAt = real.toISOString();
    const leasedUntil = new Date(real.getTime() + leaseMs).toISOString();
    const startsClock = this.#options.createdAtFirstClaim
      ? sql`, created_at = case when o.attempts = 0 then ${realAt}::timestamptz else o.created_at end`
      : sql``;
    const candidates = claimCandidates({
      topics: [...this.#handlers.keys()],
      now,
      realAt,
      batchSize,
      inOrderBySubject: this.#options.inOrderBySubject ?? false,
      perReceiver: this.#options.perReceiver,
      busy,
    });
    const { rows } = await sql<{
      id: string;
      topic: OutboxTopic;
      subject_id: string;
      payload: Record<string, unknown>;
      created_at: Date;
      attempts: number;
    }>`update outbox o set leased_until = ${leasedUntil}::timestamptz, attempts = o.attempts + 1 ${startsClock}
      where o.id in (${candidates})
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

  async #deliver(message: ClaimedMessage, at: Date): Promise<Delivery> {
    const handler = this.#handlerOf(message);
    try {
      const result = await withTimeout(handler.send(message, at), this.#options.sendTimeoutMs);
      return { kind: 'sent', message, result };
    } catch (error) {
      const reason = handler.refusalOf(error);
      return reason === undefined
        ? { kind: 'retried', message, error }
        : { kind: 'refused', message, reason };
    }
  }

  #handlerOf(message: ClaimedMessage): OutboxHandler {
    const handler = this.#handlers.get(message.topic);
    if (!handler) throw new Error(`no outbox handler for topic ${message.topic}`);
    return handler;
  }

  /**
   * Records ended sends: the answered and refused messages deleted and their outcomes applied, in one transaction (a
   * message another process closed meanwhile is not applied again); the retries due again later, and the released
   * ones free at once, in one statement.
   */
  async #record(deliveries: readonly Delivery[], at: Date): Promise<void> {
    // In id order, so that two processes closing the same messages (a lease that ran out) lock them alike.
    const closing = deliveries
      .flatMap((d) => (d.kind === 'sent' || d.kind === 'refused' ? [d] : []))
      .sort((a, b) => (a.message.id < b.message.id ? -1 : 1));
    if (closing.length > 0)
      await withTransaction(this.#options.db, async (tx) => {
        const { rows } = await sql<{ id: string }>`delete from outbox
          where id = any(${closing.map((d) => d.message.id)}::uuid[]) returning id`.execute(tx);
        const closed = new Set(rows.map((row) => row.id));
        for (const handler of this.#handlers.values()) {
          const mine = closing.filter((d) => closed.has(d.message.id) && d.message.topic === handler.topic);
          const answered = mine.flatMap((d) => (d.kind === 'sent' ? [d] : []));
          const refusals = mine.flatMap((d) => (d.kind === 'refused' ? [d] : []));
          if (answered.length > 0) await handler.sent(tx, answered, at);
          if (refusals.length > 0) await handler.refused(tx, refusals, at);
        }
      });
    const retried = deliveries.flatMap((d) => (d.kind === 'retried' ? [d] : []));
    for (const { message, error } of retried)
      this.#options.logger.warn(
        { outboxId: message.id, topic: message.topic, attempt: message.attempt, err: error },
        'outbox message not sent; it will be retried',
      );
    const released = deliveries.flatMap((d) => (d.kind === 'released' ? [d.message] : []));
    const later = [
      ...retried.map(({ message, error }) => ({
        id: message.id,
        dueAt: new Date(at.getTime() + backoffMs(message.attempt, this.#options)).toISOString(),
        error: (error instanceof Error ? error.message : String(error)).slice(0, 1000),
        tries: 0,
      })),
      // A released message was not tried: its claim does not count as an attempt.
      ...released.map((message) => ({ id: message.id, dueAt: null, error: null, tries: -1 })),
    ];
    if (later.length > 0)
      await sql`update outbox o set due_at = coalesce(l.due_at, o.due_at), leased_until = null,
          last_error = coalesce(l.error, o.last_error), attempts = o.attempts + l.tries
        from unnest(${later.map((l) => l.id)}::uuid[], ${later.map((l) => l.dueAt)}::timestamptz[],
          ${later.map((l) => l.error)}::text[], ${later.map((l) => l.tries)}::integer[]) as l(id, due_at, error, tries)
        where o.id = l.id`.execute(this.#options.db);
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
