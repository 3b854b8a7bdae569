import type { Db } from '../../db/database.ts';
import {
  afterSql,
  fetchSize,
  type ListOrder,
  PAGE_KEY,
  type Page,
  pageKeySql,
} from '../../db/keyset-page.ts';
import {
  type FilterExpression,
  type FilterQueryFields,
  filterQuerySql,
} from '../../platform/filter-query.ts';

export interface OrganizationRow {
  id: string;
  name: string;
  products: string[];
}

/** What the deprecated free-form `filter` of the organizations list can name. */
export const ORGANIZATION_FILTER_FIELDS: FilterQueryFields = {
  name: { column: 'organizations.name', contains: true },
};

/** The organizations list's order: by name, then by id. */
export const ORGANIZATION_LIST_ORDER: ListOrder = {
  list: 'organizations',
  key: { column: 'organizations.name', type: 'text' },
  id: 'organizations.id',
};

/** One page of the organizations linked to the client, by name, with one row more when another page follows. */
export async function findOrganizationsForClient(
  db: Db,
  clientId: string,
  options: { filter?: FilterExpression | undefined; page: Page },
): Promise<(OrganizationRow & { [PAGE_KEY]: string })[]> {
  let query = db
    .selectFrom('organizations')
    .innerJoin('oauth_client_organizations as link', 'link.organization_id', 'organizations.id')
    .select(['organizations.id', 'organizations.name', 'organizations.products'])
    .select(pageKeySql(ORGANIZATION_LIST_ORDER).as(PAGE_KEY))
    .where('link.client_id', '=', clientId)
    .where(afterSql(ORGANIZATION_LIST_ORDER, options.page))
    .orderBy('organizations.name')
    .orderBy('organizations.id')
    .limit(fetchSize(options.page));
  const { filter } = options;
  if (filter) query = query.where(filterQuerySql(filter, ORGANIZATION_FILTER_FIELDS));
  return query.execute();
}

export async function findOrganizationForClient(
  db: Db,
  clientId: string,
  id: string,
): Promise<OrganizationRow | undefined> {
  return db
    .selectFrom('organizations')
    .innerJoin('oauth_client_organizations as link', 'link.organization_id', 'organizations.id')
    .select(['organizations.id', 'organizations.name', 'organizations.products'])
    .where('link.client_id', '=', clientId)
    .where('organizations.id', '=', id)
    .executeTakeFirst();
}
