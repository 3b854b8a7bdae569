import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Db } from '../db/database.ts';
import {
  afterSql,
  fetchSize,
  type ListOrder,
  orderSql,
  PAGE_KEY,
  type Page,
  pageKeySql,
} from '../db/keyset-page.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors/app-error.ts';
import { InputError, InputRefusedError } from '../errors/input-error.ts';
import type { Complaint, ComplaintOpening, ComplaintStatus } from './complaint.ts';

/** The complaints list: newest first, as an operator works through them. */
export const COMPLAINT_LIST_ORDER: ListOrder = {
  list: 'complaints',
  key: { column: 'complaints.opened_at', type: 'timestamptz' },
  id: 'complaints.id',
  direction: 'desc',
};

type ComplaintRow = DB['complaints'] extends infer T ? { [K in keyof T]: unknown } : never;

function complaintOf(row: ComplaintRow): Complaint {
  const instant = (value: unknown) => (value === null ? null : new Date(value as Date).toISOString());
  return {
    id: row.id as string,
    organization_id: row.organization_id as string,
    person_id: (row.person_id as string | null) ?? null,
    state: (row.state as string).trim(),
    channel: row.channel as Complaint['channel'],
    summary: row.summary as string,
    status: row.status as ComplaintStatus,
    answer: (row.answer as string | null) ?? null,
    resolution: (row.resolution as string | null) ?? null,
    opened_at: instant(row.opened_at) as string,
    answered_at: instant(row.answered_at),
    closed_at: instant(row.closed_at),
  };
}

/**
 * Opens a complaint. Its state is the person's state of residence now (kept as it is if they move later); a
 * `state` given must agree with it, and is needed when there is no person or the person has none on record. The
 * person, when named, must work or have worked for the organization.
 */
export async function openComplaint(
  db: Kysely<DB>,
  opening: ComplaintOpening,
  now: Date,
): Promise<Complaint> {
  const organization = await db
    .selectFrom('organizations')
    .select('id')
    .where('id', '=', opening.organizationId)
    .executeTakeFirst();
  if (!organization)
    throw new InputRefusedError(`No organization has the id ${opening.organizationId}.`, {
      field: 'organization_id',
    });
  let state = opening.state;
  if (opening.personId !== undefined) {
    const person = await db
      .selectFrom('people')
      .select([
        'state_of_residence',
        sql<boolean>`exists (select 1 from jobs j where j.person_id = people.id
          and j.organization_id = ${opening.organizationId})`.as('employed'),
      ])
      .where('id', '=', opening.personId)
      .executeTakeFirst();
    if (!person)
      throw new InputRefusedError(`No person has the id ${opening.personId}.`, { field: 'person_id' });
    if (!person.employed)
      throw new InputRefusedError(
        `Person ${opening.personId} has no job at organization ${opening.organizationId}.`,
        { field: 'person_id' },
      );
    const recorded = person.state_of_residence?.trim() || undefined;
    if (recorded !== undefined && state !== undefined && state !== recorded)
      throw new InputError(
        `state ${state} is not the person's state of residence on record (${recorded}): the complaint is counted where the person lives; leave state out.`,
        { field: 'state' },
      );
    state ??= recorded;
  }
  if (state === undefined)
    throw new InputError(
      opening.personId === undefined
        ? 'state is required when no person is named: the state of residence of the complainant.'
        : 'state is required: the person has no state of residence on record.',
      { field: 'state' },
    );
  const row = await db
    .insertInto('complaints')
    .values({
      id: randomUUID(),
      organization_id: opening.organizationId,
      person_id: opening.personId ?? null,
      state,
      channel: opening.channel,
      summary: opening.summary,
      status: 'OPEN',
      opened_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return complaintOf(row);
}

export async function findComplaint(db: Kysely<DB>, id: string): Promise<Complaint> {
  const row = await db.selectFrom('complaints').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new AppError('RECORD_NOT_FOUND', { detail: `No complaint has the id ${id}.` });
  return complaintOf(row);
}

/** What a transition does: the status it leaves, the statuses it may start from, and the text it records. */
const TRANSITIONS = {
  answer: { to: 'ANSWERED', from: ['OPEN'], text: 'answer', at: 'answered_at' },
  close: { to: 'CLOSED', from: ['OPEN', 'ANSWERED'], text: 'resolution', at: 'closed_at' },
} as const;

export type ComplaintTransition = keyof typeof TRANSITIONS;

/**
 * Answers or closes a complaint in one conditional update: the row changes only while its status still allows it,
 * so of two transitions sent at once (two operators, two processes) the second finds the first's status and is
 * refused, never written over it; a close that finds an answer made meanwhile closes it at or after that answer.
 * A refusal says which status the complaint has.
 */
export async function moveComplaint(
  db: Db,
  id: string,
  transition: ComplaintTransition,
  text: string,
  now: Date,
): Promise<Complaint> {
  const { to, from, text: column, at } = TRANSITIONS[transition];
  // `now` is read before the row's lock is had: an answer that committed while this close waited for it may carry a
  // later instant. The close comes after it, so it is recorded no earlier than it.
  const instant = sql<Date>`greatest(${now}::timestamptz, answered_at, opened_at)`;
  const moved = await db
    .updateTable('complaints')
    .set({ status: to, [column]: text, [at]: instant })
    .where('id', '=', id)
    .where('status', 'in', [...from])
    .where('opened_at', '<=', now)
    .returningAll()
    .executeTakeFirst();
  if (moved) return complaintOf(moved);
  const current = await findComplaint(db, id);
  throw new AppError('INVALID_RESOURCE_STATE', {
    detail:
      current.opened_at > now.toISOString()
        ? `Complaint ${id} was opened at ${current.opened_at}, after now (${now.toISOString()}).`
        : `Complaint ${id} is ${current.status}: only ${from.join(' or ')} complaints can be ${transition === 'answer' ? 'answered' : 'closed'}.`,
  });
}

export interface ComplaintFilter {
  state?: string | undefined;
  status?: ComplaintStatus | undefined;
  organizationId?: string | undefined;
}

export async function listComplaints(
  db: Kysely<DB>,
  filter: ComplaintFilter,
  page?: Page,
): Promise<(Complaint & { [PAGE_KEY]: string })[]> {
  let query = db
    .selectFrom('complaints')
    .selectAll()
    .select(pageKeySql(COMPLAINT_LIST_ORDER).as(PAGE_KEY))
    .where(afterSql(COMPLAINT_LIST_ORDER, page));
  if (filter.state !== undefined) query = query.where('state', '=', filter.state);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.organizationId !== undefined) query = query.where('organization_id', '=', filter.organizationId);
  query = query.orderBy(orderSql(COMPLAINT_LIST_ORDER));
  if (page) query = query.limit(fetchSize(page));
  const rows = await query.execute();
  return rows.map((row) => ({ ...complaintOf(row), [PAGE_KEY]: row[PAGE_KEY] }));
}
