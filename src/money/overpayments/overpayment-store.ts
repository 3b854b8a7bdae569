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
import type { OverpaymentRow } from './overpayment.ts';

/** Operators' list of overpayments: oldest found first. */
export const OVERPAYMENT_LIST_ORDER: ListOrder = {
  list: 'overpayments',
  key: { column: 'o.detected_at', type: 'timestamptz' },
  id: 'o.id',
};

export interface OverpaymentFilter {
  status?: string | undefined;
  personId?: string | undefined;
  organizationId?: string | undefined;
}

/** A page of overpayments (operators: CLI and admin API), each with its sort key as PAGE_KEY. */
export async function listOverpayments(
  db: Db,
  filter: OverpaymentFilter,
  page: Page,
): Promise<(OverpaymentRow & { [PAGE_KEY]: string })[]> {
  const { rows } = await sql<OverpaymentRow & { [PAGE_KEY]: string }>`select o.*,
      ${pageKeySql(OVERPAYMENT_LIST_ORDER)} as ${sql.ref(PAGE_KEY)}
    from overpayments o
    where ${afterSql(OVERPAYMENT_LIST_ORDER, page)}
      and (${filter.status ?? null}::text is null or o.status = ${filter.status ?? null})
      and (${filter.personId ?? null}::uuid is null or o.person_id = ${filter.personId ?? null}::uuid)
      and (${filter.organizationId ?? null}::uuid is null or o.organization_id = ${filter.organizationId ?? null}::uuid)
    order by ${orderSql(OVERPAYMENT_LIST_ORDER)}
    limit ${fetchSize(page)}`.execute(db);
  return rows;
}

export async function findOverpayment(db: Db, id: string): Promise<OverpaymentRow | undefined> {
  return db.selectFrom('overpayments').selectAll().where('id', '=', id).executeTakeFirst();
}
