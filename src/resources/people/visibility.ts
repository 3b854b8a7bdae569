import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Caller } from '../../platform/access-tokens.ts';

/** Whether the organization in this column is linked to the client: all a client token may see of employers. */
export function organizationLinkedTo(clientId: string, organizationIdColumn: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`exists (select 1 from oauth_client_organizations visible_link
    where visible_link.organization_id = ${sql.ref(organizationIdColumn)} and visible_link.client_id = ${clientId})`;
}

/**
 * Which people a caller may see (DESIGN §5): a user token its own person only; a client token the people who hold
 * a job at an organization linked to that client. Used as a WHERE condition on a person id column, so that another
 * tenant's record is simply not found.
 */
export function personVisibleTo(caller: Caller, personIdColumn: string): RawBuilder<SqlBool> {
  if (caller.kind === 'user') return sql<SqlBool>`${sql.ref(personIdColumn)} = ${caller.personId}`;
  return sql<SqlBool>`exists (select 1 from jobs visible_job
    where visible_job.person_id = ${sql.ref(personIdColumn)}
      and ${organizationLinkedTo(caller.clientId, 'visible_job.organization_id')})`;
}
