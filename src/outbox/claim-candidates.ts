import { type RawBuilder, sql } from 'kysely';
import type { OutboxTopic } from './outbox-message.ts';

export interface ClaimQuery {
  topics: readonly OutboxTopic[];
  /** The clock of due times, and real time for leases, as ISO instants. */
  now: string;
  realAt: string;
  batchSize: number;
  /** A message waits while an earlier one of its subject is still in the outbox (being sent, or due again later). */
  inOrderBySubject: boolean;
  perReceiver: { key: string; atOnce: number } | undefined;
  /** By receiver, the messages this dispatch holds already: they take lanes of perReceiver. */
  busy: ReadonlyMap<string, number>;
}

/**
 * The ids a claim takes, locked (`FOR UPDATE SKIP LOCKED`): due, not leased, at most `batchSize`, in due order; in
 * order by subject, each subject's first message only; with lanes per receiver, at most a receiver's free lanes.
 */
export function claimCandidates(query: ClaimQuery): RawBuilder<unknown> {
  const { now, realAt, batchSize, perReceiver } = query;
  // Literals, so that the planner uses the partial index of the topic (migrations 0013 and 0038).
  const topics = sql.join(query.topics.map((topic) => sql.lit(topic)));
  const dueAndFree = sql`due_at <= ${now}::timestamptz
    and (leased_until is null or leased_until <= ${realAt}::timestamptz)`;
  // The due and lease conditions stand in the locking select itself, not only in the choice below it: there
  // PostgreSQL checks each row it locks against the row's latest version, so a row another process claimed (and
  // committed) after this statement's snapshot is left, not claimed a second time.
  if (!query.inOrderBySubject)
    // Rail instructions have a subject each, and keep the plain order of their index.
    return sql`select id from outbox where topic in (${topics}) and ${dueAndFree}
      order by due_at, id limit ${batchSize} for update skip locked`;
  // Each subject's first message still in the outbox, in due order: the candidates of one receiver, or of all.
  const firstOfSubject = (receiverIs: RawBuilder<unknown>, limit: RawBuilder<unknown>) => sql`select m.id,
      m.due_at, m.sequence from outbox m
    where m.topic in (${topics}) ${receiverIs} and m.due_at <= ${now}::timestamptz
      and (m.leased_until is null or m.leased_until <= ${realAt}::timestamptz)
      and not exists (select 1 from outbox earlier where earlier.topic = m.topic
        and earlier.subject_id = m.subject_id and earlier.sequence < m.sequence)
    order by m.due_at, m.sequence limit ${limit}`;
  const chosen = perReceiver
    ? receiversInTurn(perReceiver, topics, query.busy, firstOfSubject, batchSize)
    : sql`select due.id from (${firstOfSubject(sql``, sql`${batchSize}`)}) due`;
  return sql`select id from outbox where id in (${chosen}) and ${dueAndFree} for update skip locked`;
}

/**
 * With lanes per receiver, the receivers that have messages are found by skipping through the receiver index
 * (migration 0038) one value at a time, and each is read from its own first message on, up to its free lanes: a
 * claim costs the receivers and the rows it takes, not the backlog. Ranking every due row by receiver instead made
 * each claim read the whole outbox, so a backlog of one receiver slowed every claim. A message must name its
 * receiver: one without the key is never found.
 */
function receiversInTurn(
  perReceiver: { key: string; atOnce: number },
  topics: RawBuilder<unknown>,
  busy: ReadonlyMap<string, number>,
  firstOfSubject: (receiverIs: RawBuilder<unknown>, limit: RawBuilder<unknown>) => RawBuilder<unknown>,
  batchSize: number,
): RawBuilder<unknown> {
  // A literal, so that the expression is the index's.
  const key = sql.lit(perReceiver.key);
  const held = [...busy].filter(([, n]) => n > 0);
  const freeLanes = sql`greatest(${perReceiver.atOnce} - coalesce((select held.n
    from unnest(${held.map(([receiver]) => receiver)}::text[], ${held.map(([, n]) => n)}::integer[])
      as held(receiver, n) where held.receiver = receivers.receiver), 0), 0)`;
  return sql`with recursive receivers(receiver) as (
      (select payload->>${key} from outbox where topic in (${topics}) and payload->>${key} is not null
        order by 1 limit 1)
      union all
      select (select payload->>${key} from outbox where topic in (${topics})
          and payload->>${key} > receivers.receiver order by 1 limit 1)
        from receivers where receivers.receiver is not null)
    select due.id from receivers
      cross join lateral (${firstOfSubject(sql`and m.payload->>${key} = receivers.receiver`, freeLanes)}) due
    order by due.due_at, due.sequence limit ${batchSize}`;
}
