import { type RawBuilder, sql } from 'kysely';
import type { Tx } from '../db/transaction.ts';

/** What leaves the database after commit. Each topic has one handler (outbox-dispatcher.ts). */
export type OutboxTopic = 'rail.payment' | 'webhook.delivery';

/** An effect to send once its transaction commits; `id` is the idempotency key the receiver is given. */
export interface OutboxMessage {
  id: string;
  topic: OutboxTopic;
  /** What the effect is about (a transfer or a paycheck): one message per topic and subject. */
  subjectId: string;
  payload: Record<string, unknown>;
  createdAt: Date;
  /** Not sent before then. */
  dueAt: Date;
}

/**
 * A CTE item (`outbox_written`) that writes the messages in the caller's statement, so that they commit with the
 * change that causes them or not at all.
 */
export function outboxWrites(messages: readonly OutboxMessage[]): RawBuilder<unknown> {
  const column = <T>(pick: (message: OutboxMessage) => T) => messages.map(pick);
  return sql`outbox_written as (insert into outbox (id, topic, subject_id, payload, created_at, due_at)
    select m.id, m.topic, m.subject_id, m.payload::jsonb, m.created_at, m.due_at
    from unnest(${column((m) => m.id)}::uuid[], ${column((m) => m.topic)}::text[],
      ${column((m) => m.subjectId)}::uuid[], ${column((m) => JSON.stringify(m.payload))}::text[],
      ${column((m) => m.createdAt.toISOString())}::timestamptz[], ${column((m) => m.dueAt.toISOString())}::timestamptz[])
      as m(id, topic, subject_id, payload, created_at, due_at))`;
}

/** Writes messages in the caller's transaction. */
export async function enqueue(tx: Tx, messages: readonly OutboxMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await sql`with ${outboxWrites(messages)} select 1`.execute(tx);
}
