import type { Kysely } from 'kysely';
import { afterSql, type ListOrder, PAGE_KEY, type Page, pageKeySql } from '../../db/keyset-page.ts';
import type { DB } from '../../db/schema.ts';
import type { Caller } from '../../platform/access-tokens.ts';
import type { FilterQueryFields } from '../../platform/filter-query.ts';
import { runListPage } from '../../platform/list-page.ts';
import { type ListQuery, listQuerySql } from '../../platform/list-query.ts';
import { organizationLinkedTo } from '../people/visibility.ts';

export interface JobRow {
  id: string;
  person_id: string;
  organization_id: string;
  external_primary_identifier: string;
  external_employee_id: string | null;
  external_group: string | null;
  first_name: string;
  last_name: string;
  location: string | null;
  title: string | null;
  department: string | null;
  activation_status: string;
  wage_rate_minor: number;
  wage_currency: string;
  wage_frequency: string;
  direct_deposit_status: string;
  direct_deposit_default_depository_id: string | null;
  direct_deposit_default_card_id: string | null;
}

const COLUMNS = [
  'jobs.id',
  'jobs.person_id',
  'jobs.organization_id',
  'jobs.external_primary_identifier',
  'jobs.external_employee_id',
  'jobs.external_group',
  'jobs.first_name',
  'jobs.last_name',
  'jobs.location',
  'jobs.title',
  'jobs.department',
  'jobs.activation_status',
  'jobs.wage_rate_minor',
  'jobs.wage_currency',
  'jobs.wage_frequency',
  'jobs.direct_deposit_status',
  'jobs.direct_deposit_default_depository_id',
  'jobs.direct_deposit_default_card_id',
] as const;

/** The `filter[...]` fields of the jobs list and the deprecated free-form `filter`, with their columns. */
export const JOB_FILTER_FIELDS: FilterQueryFields = {
  'external_identifiers.primary_identifier': { column: 'jobs.external_primary_identifier', contains: true },
  'external_identifiers.employee_id': { column: 'jobs.external_employee_id', contains: true },
  'external_identifiers.group': { column: 'jobs.external_group', contains: true },
  'person.id': { column: 'jobs.person_id', contains: false },
  'organization.id': { column: 'jobs.organization_id', contains: false },
};

/**
 * A user sees the jobs of its own person; a client the jobs at the organizations linked to it (not a worker's
 * jobs at other employers, which are another tenant's).
 */
function jobsVisibleTo(db: Kysely<DB>, caller: Caller) {
  const query = db.selectFrom('jobs').select(COLUMNS);
  return caller.kind === 'user'
    ? query.where('jobs.person_id', '=', caller.personId)
    : query.where(organizationLinkedTo(caller.clientId, 'jobs.organization_id'));
}

/** The jobs list's order: oldest first, then by id. */
export const JOB_LIST_ORDER: ListOrder = {
  list: 'jobs',
  key: { column: 'jobs.created_at', type: 'timestamptz' },
  id: 'jobs.id',
};

/** One page of the jobs visible to the caller, with one row more when another page follows. */
export async function findVisibleJobs(
  db: Kysely<DB>,
  caller: Caller,
  options: { query: ListQuery; page: Page },
): Promise<(JobRow & { [PAGE_KEY]: string })[]> {
  const build = (who: Caller, limit: number) =>
    jobsVisibleTo(db, who)
      .select(pageKeySql(JOB_LIST_ORDER).as(PAGE_KEY))
      .where(listQuerySql(options.query, JOB_FILTER_FIELDS))
      .where(afterSql(JOB_LIST_ORDER, options.page))
      .orderBy('jobs.created_at')
      .orderBy('jobs.id')
      .limit(limit);
  return runListPage(db, "jobs: a user's first page", caller, options, build);
}

export async function findVisibleJob(
  db: Kysely<DB>,
  caller: Caller,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<JobRow | undefined> {
  let query = jobsVisibleTo(db, caller).where('jobs.id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export interface JobChanges {
  activation_status?: string;
  direct_deposit_status?: string;
  direct_deposit_default_depository_id?: string;
  direct_deposit_default_card_id?: string;
}

export async function updateJob(db: Kysely<DB>, id: string, changes: JobChanges, now: Date): Promise<JobRow> {
  return db
    .updateTable('jobs')
    .set({ ...changes, updated_at: now })
    .where('jobs.id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}
