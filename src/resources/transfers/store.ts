import { sql } from 'kysely';
import { runCompiledOnce } from '../../db/compiled-once.ts';
import type { Db } from '../../db/database.ts';
import {
  afterSql,
  fetchSize,
  type ListOrder,
  orderSql,
  PAGE_KEY,
  type Page,
  pageKeySql,
} from '../../db/keyset-page.ts';
import type { FundingSourceRow, TransferRow } from '../../money/advances/transfer.ts';
import type { FilterQueryFields } from '../../platform/filter-query.ts';
import { isPlainList } from '../../platform/list-page.ts';
import { type ListQuery, listQuerySql } from '../../platform/list-query.ts';

export const TRANSFER_FILTER_FIELDS: FilterQueryFields = {
  submitted_at: { column: 't.submitted_at', contains: false, instantColumn: 't.submitted_at' },
};

const TRANSFER_COLUMNS = sql`t.id, t.person_id, t.origin_account_id, t.origin_paycheck_id, t.destination_account_id,
  t.amount_minor, t.fee_minor, trim(t.currency) as currency, t.schedule, t.status, t.failure_reason,
  t.rail_reference, t.settle_after, t.submitted_at, t.resolved_at`;

/** The transfers list's order: oldest first (by submitted_at), then by id. */
export const TRANSFER_LIST_ORDER: ListOrder = {
  list: 'transfers',
  key: { column: 't.submitted_at', type: 'timestamptz' },
  id: 't.id',
};

/** A transfer with its funding sources, read in the same statement (one round trip). */
export type TransferWithSources = TransferRow & { funding_sources: FundingSourceRow[] };

/** Each transfer's funding sources as a JSON array, in the order they were written. */
const FUNDING_SOURCES_COLUMN = sql`(select coalesce(json_agg(json_build_object('transfer_id', f.transfer_id,
      'paycheck_id', f.paycheck_id, 'stage', f.stage, 'amount_minor', f.amount_minor,
      'currency', trim(f.currency)) order by f.id), '[]')
    from funding_sources f where f.transfer_id = t.id) as funding_sources`;

/** One page of a person's transfers, oldest first, with one row more when another page follows. */
export async function findTransfersOfPerson(
  db: Db,
  personId: string,
  query: ListQuery,
  page: Page,
): Promise<(TransferWithSources & { [PAGE_KEY]: string })[]> {
  const build = (person: string, limit: number) => {
    const statement = sql<TransferWithSources & { [PAGE_KEY]: string }>`select ${TRANSFER_COLUMNS},
        ${FUNDING_SOURCES_COLUMN}, ${pageKeySql(TRANSFER_LIST_ORDER)} as ${sql.ref(PAGE_KEY)}
      from transfers t
      where t.person_id = ${person}::uuid and ${listQuerySql(query, TRANSFER_FILTER_FIELDS)}
        and ${afterSql(TRANSFER_LIST_ORDER, page)}
      order by ${orderSql(TRANSFER_LIST_ORDER)} limit ${limit}`;
    return { compile: () => statement.compile(db) };
  };
  if (isPlainList(query, page))
    return runCompiledOnce(db, "transfers: a person's first page", [personId, fetchSize(page)], build);
  const { rows } = await db.executeQuery(build(personId, fetchSize(page)).compile());
  return rows;
}

/** One transfer of the person with its funding sources; undefined when it is not theirs. */
export async function readTransferOfPerson(
  db: Db,
  personId: string,
  id: string,
): Promise<TransferWithSources | undefined> {
  const { rows } = await sql<TransferWithSources>`select ${TRANSFER_COLUMNS}, ${FUNDING_SOURCES_COLUMN}
    from transfers t where t.id = ${id}::uuid and t.person_id = ${personId}::uuid`.execute(db);
  return rows[0];
}

/** The account an advance comes from or goes to, if it is the person's and not deleted. */
