import type { Db } from '../../db/database.ts';
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

/** Organizations linked to the client, by name, at most `limit`. */
export async function findOrganizationsForClient(
  db: Db,
  clientId: string,
  options: { filter?: FilterExpression | undefined; limit: number },
): Promise<OrganizationRow[]> {
  let query = db
    .selectFrom('organizations')
    .innerJoin('oauth_client_organizations as link', 'link.organization_id', 'organizations.id')
    .select(['organizations.id', 'organizations.name', 'organizations.products'])
    .where('link.client_id', '=', clientId)
    .orderBy('organizations.name')
    .orderBy('organizations.id')
    .limit(options.limit);
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
