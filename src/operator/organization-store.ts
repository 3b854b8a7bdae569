import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { afterSql, fetchSize, type ListOrder, orderSql, type Page } from '../db/keyset-page.ts';
import type { Tx } from '../db/transaction.ts';
import {
  type OrganizationPolicy,
  POLICY_FIELDS,
  POLICY_KEYS,
  policyAttributes,
} from './organization-policy.ts';

export interface Organization {
  id: string;
  name: string;
  products: string[];
  createdAt: Date;
  updatedAt: Date;
  /** Null for an organization made without one (older data); setting the policy creates it with the defaults. */
  policy: OrganizationPolicy | null;
}

type PolicyRow = Record<string, unknown>;

// The anchor is a date column; as text it stays a calendar day on both drivers instead of a local-midnight Date.
export const POLICY_COLUMNS = POLICY_KEYS.map((key) => POLICY_FIELDS[key].name).map((column) =>
  column === 'pay_calendar_anchor'
    ? sql`p.pay_calendar_anchor::text as pay_calendar_anchor`
    : sql`p.${sql.ref(column)} as ${sql.ref(column)}`,
);

export function toPolicy(row: PolicyRow): OrganizationPolicy {
  const policy = {} as Record<string, unknown>;
  for (const key of POLICY_KEYS) {
    const value = row[POLICY_FIELDS[key].name];
    policy[key] = typeof value === 'string' ? value.trim() : value;
  }
  return policy as unknown as OrganizationPolicy;
}

interface OrganizationRow extends PolicyRow {
  id: string;
  name: string;
  products: string[];
  created_at: Date;
  updated_at: Date;
  has_policy: boolean;
}

function toOrganization(row: OrganizationRow): Organization {
  return {
    id: row.id,
    name: row.name,
    products: row.products,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    policy: row.has_policy ? toPolicy(row) : null,
  };
}

function selectOrganizations(where: ReturnType<typeof sql>, tail: ReturnType<typeof sql> = sql``) {
  return sql<OrganizationRow>`select o.id, o.name, o.products, o.created_at, o.updated_at,
      p.organization_id is not null as has_policy, ${sql.join(POLICY_COLUMNS)}
    from organizations o left join organization_policies p on p.organization_id = o.id
    where ${where} ${tail}`;
}

export async function findOrganizationById(db: Db | Tx, id: string): Promise<Organization | undefined> {
  const { rows } = await selectOrganizations(sql`o.id = ${id}`).execute(db);
  return rows[0] && toOrganization(rows[0]);
}

/** Organizations by name, then id, so that pages are stable. */
export async function findOrganizations(
  db: Db,
  page: { offset: number; limit: number },
): Promise<Organization[]> {
  const { rows } = await selectOrganizations(
    sql`true`,
    sql`order by o.name, o.id offset ${page.offset} limit ${page.limit}`,
  ).execute(db);
  return rows.map(toOrganization);
}

/** The order of the operator's organizations list: by name, then id. A name is its own page key (as text). */
export const ORGANIZATION_PAGE_ORDER: ListOrder = {
  list: 'admin_organizations',
  key: { column: 'o.name', type: 'text' },
  id: 'o.id',
};

/** One page of every organization, by name then id, with one more when another page follows (keyset). */
export async function findOrganizationsPage(db: Db, page: Page): Promise<Organization[]> {
  const { rows } = await selectOrganizations(
    afterSql(ORGANIZATION_PAGE_ORDER, page),
    sql`order by ${orderSql(ORGANIZATION_PAGE_ORDER)} limit ${fetchSize(page)}`,
  ).execute(db);
  return rows.map(toOrganization);
}

export async function insertOrganization(
  tx: Tx,
  organization: { id: string; name: string; products: string[] },
): Promise<void> {
  await tx.insertInto('organizations').values(organization).execute();
}

/** The policy row with the migration's defaults, unless there is one already. */
export async function insertDefaultPolicy(tx: Db | Tx, organizationId: string): Promise<void> {
  await tx
    .insertInto('organization_policies')
    .values({ organization_id: organizationId })
    .onConflict((conflict) => conflict.column('organization_id').doNothing())
    .execute();
}

/** Locks the organization row, so that concurrent policy changes apply one after the other. */
export async function lockOrganization(tx: Tx, id: string): Promise<boolean> {
  const row = await tx
    .selectFrom('organizations')
    .select('id')
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

export async function updatePolicy(
  tx: Tx,
  organizationId: string,
  policy: OrganizationPolicy,
): Promise<void> {
  await tx
    .updateTable('organization_policies')
    .set({ ...policyAttributes(policy), updated_at: sql<Date>`now()` })
    .where('organization_id', '=', organizationId)
    .execute();
  await tx
    .updateTable('organizations')
    .set({ updated_at: sql<Date>`now()` })
    .where('id', '=', organizationId)
    .execute();
}

export async function organizationHasJobs(tx: Tx, organizationId: string): Promise<boolean> {
  const row = await tx
    .selectFrom('jobs')
    .select('id')
    .where('organization_id', '=', organizationId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
