import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import type { FilterExpression } from './filter-query.ts';

export interface OrganizationRow {
  id: string;
  name: string;
  products: string[];
}

type OrganizationsBuilder = ExpressionBuilder<DB, 'organizations'>;

function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

function toSql(eb: OrganizationsBuilder, filter: FilterExpression): Expression<SqlBool> {
  if (filter.kind === 'match') {
    return filter.operator === 'equals'
      ? eb('organizations.name', '=', filter.value)
      : eb('organizations.name', 'ilike', likePattern(filter.value));
  }
  const parts = [toSql(eb, filter.left), toSql(eb, filter.right)];
  return filter.kind === 'and' ? eb.and(parts) : eb.or(parts);
}

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
  if (filter) query = query.where((eb) => toSql(eb as unknown as OrganizationsBuilder, filter));
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
