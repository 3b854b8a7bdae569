import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { namedOrganization } from './organizations.ts';

/**
 * Where each person of an organization's roster stands with signing up: whether they have a password, and their
 * latest invitation code, without the code (only its hash is kept). For the operator who chases the people who
 * have not signed up and needs to know whose code expired.
 */
export type InvitationState = 'NONE' | 'OPEN' | 'EXPIRED' | 'USED' | 'REVOKED';

export interface RosterSignUp {
  personId: string;
  email: string;
  firstName: string;
  lastName: string;
  hasPassword: boolean;
  /** Of the person's latest code: NONE when they were never given one. */
  invitation: InvitationState;
  invitedAt: Date | null;
  expiresAt: Date | null;
  usedAt: Date | null;
  replacesPassword: boolean | null;
}

export interface RosterSignUpQuery {
  organizationId: string;
  /** Only people without a password: those who have not signed up. */
  pendingOnly: boolean;
  now: Date;
  /** Called with each page of people, in the order of their ids, as it is read. */
  onPage: (page: RosterSignUp[]) => void | Promise<void>;
}

/** People read per statement: a roster of any size is listed in pages, never held whole. */
const PAGE_PEOPLE = 1_000;

interface Row {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  has_password: boolean;
  created_at: Date | null;
  expires_at: Date | null;
  used_at: Date | null;
  revoked_at: Date | null;
  replaces_password: boolean | null;
}

function stateOf(row: Row, now: Date): InvitationState {
  if (!row.created_at) return 'NONE';
  if (row.used_at) return 'USED';
  if (row.revoked_at) return 'REVOKED';
  return row.expires_at && row.expires_at.getTime() > now.getTime() ? 'OPEN' : 'EXPIRED';
}

/** Lists the people with a job at the organization and an email, as `ewa people invite` chooses them. */
export async function listRosterSignUps(
  db: Db,
  query: RosterSignUpQuery,
): Promise<{ organizationId: string; organizationName: string; listed: number }> {
  const organization = await namedOrganization(db, query.organizationId);
  let after = '00000000-0000-0000-0000-000000000000';
  let listed = 0;
  for (;;) {
    const { rows } = await sql<Row>`select p.id, p.email, p.first_name, p.last_name,
        p.password_hash is not null as has_password,
        latest.created_at, latest.expires_at, latest.used_at, latest.revoked_at, latest.replaces_password
      from people p
      left join lateral (select i.created_at, i.expires_at, i.used_at, i.revoked_at, i.replaces_password
        from invitations i where i.person_id = p.id order by i.created_at desc, i.id desc limit 1) latest on true
      where p.email is not null and p.id > ${after}::uuid
        and exists (select 1 from jobs j where j.person_id = p.id and j.organization_id = ${organization.id})
        ${query.pendingOnly ? sql`and p.password_hash is null` : sql``}
      order by p.id limit ${PAGE_PEOPLE}`.execute(db);
    if (rows.length === 0) break;
    after = rows.at(-1)!.id;
    listed += rows.length;
    await query.onPage(
      rows.map((row) => ({
        personId: row.id,
        email: row.email,
        firstName: row.first_name,
        lastName: row.last_name,
        hasPassword: row.has_password,
        invitation: stateOf(row, query.now),
        invitedAt: row.created_at,
        expiresAt: row.expires_at,
        usedAt: row.used_at,
        replacesPassword: row.replaces_password,
      })),
    );
    if (rows.length < PAGE_PEOPLE) break;
  }
  return { organizationId: organization.id, organizationName: organization.name, listed };
}

/** A person's sign-up state as `ewa people invitations --json` shows it. */
export function rosterSignUpAttributes(person: RosterSignUp) {
  return {
    person_id: person.personId,
    email: person.email,
    first_name: person.firstName,
    last_name: person.lastName,
    has_password: person.hasPassword,
    invitation: person.invitation,
    invited_at: person.invitedAt?.toISOString() ?? null,
    expires_at: person.expiresAt?.toISOString() ?? null,
    used_at: person.usedAt?.toISOString() ?? null,
    replaces_password: person.replacesPassword,
  };
}
