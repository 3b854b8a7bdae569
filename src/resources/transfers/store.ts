import { sql } from 'kysely';
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
import type { Tx } from '../../db/transaction.ts';
import type { FundingSourceRow, TransferRow } from '../../money/advances/transfer.ts';
import type { FilterQueryFields } from '../../platform/filter-query.ts';
import { type ListQuery, listQuerySql } from '../../platform/list-query.ts';

export const TRANSFER_FILTER_FIELDS: FilterQueryFields = {
  submitted_at: { column: 't.submitted_at', contains: false },
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

/** One page of a person's transfers, oldest first, with one row more when another page follows. */
export async function findTransfersOfPerson(
  db: Db,
  personId: string,
  query: ListQuery,
  page: Page,
): Promise<(TransferRow & { [PAGE_KEY]: string })[]> {
  const { rows } = await sql<TransferRow & { [PAGE_KEY]: string }>`select ${TRANSFER_COLUMNS},
      ${pageKeySql(TRANSFER_LIST_ORDER)} as ${sql.ref(PAGE_KEY)}
    from transfers t
    where t.person_id = ${personId}::uuid and ${listQuerySql(query, TRANSFER_FILTER_FIELDS)}
      and ${afterSql(TRANSFER_LIST_ORDER, page)}
    order by ${orderSql(TRANSFER_LIST_ORDER)} limit ${fetchSize(page)}`.execute(db);
  return rows;
}

export async function findTransferOfPerson(
  db: Db | Tx,
  personId: string,
  id: string,
): Promise<TransferRow | undefined> {
  const { rows } = await sql<TransferRow>`select ${TRANSFER_COLUMNS} from transfers t
    where t.id = ${id}::uuid and t.person_id = ${personId}::uuid`.execute(db);
  return rows[0];
}

export async function findFundingSources(
  db: Db | Tx,
  transferIds: readonly string[],
): Promise<FundingSourceRow[]> {
  if (transferIds.length === 0) return [];
  const { rows } = await sql<FundingSourceRow>`select transfer_id, paycheck_id, stage, amount_minor,
      trim(currency) as currency
    from funding_sources where transfer_id = any(${[...transferIds]}::uuid[]) order by id`.execute(db);
  return rows;
}

/** The account an advance comes from or goes to, if it is the person's and not deleted. */
