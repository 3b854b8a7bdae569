import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import {
  invitationCodeHash,
  newInvitationCode,
  normalizeInvitationCode,
} from '../crypto/invitation-codes.ts';
import type { Db } from '../db/database.ts';
import { lockPeople } from '../db/lock-order.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';
import { InputError, InputRefusedError } from '../errors/input-error.ts';
import { isEmail, normalizeEmail } from '../oauth/accounts.ts';
import { namedOrganization } from './organizations.ts';

export const INVITATION_VALID_DAYS_DEFAULT = 14;
export const INVITATION_VALID_DAYS_MAX = 90;
/** People named in one call; an organization's whole roster is invited without naming anyone. */
export const INVITATION_EMAILS_MAX = 1_000;
/** People invited per transaction when the whole roster is: each batch's codes are handed out once it commits. */
const BATCH_PEOPLE = 1_000;

export interface IssuedInvitation {
  id: string;
  personId: string;
  email: string;
  firstName: string;
  lastName: string;
  /** The code itself: shown here once, never stored. */
  code: string;
  expiresAt: Date;
  replacesPassword: boolean;
}

/** An invitation as the admin API and `ewa people invite --json` show it. */
export function invitationAttributes(invitation: IssuedInvitation) {
  return {
    person_id: invitation.personId,
    email: invitation.email,
    first_name: invitation.firstName,
    last_name: invitation.lastName,
    invitation_code: invitation.code,
    expires_at: invitation.expiresAt.toISOString(),
    replaces_password: invitation.replacesPassword,
  };
}

export interface InvitationProblem {
  email: string;
  detail: string;
}

export interface InvitationInput {
  organizationId: string;
  /**
   * People to invite by email, each given a new code that replaces any they hold. Without it, everyone with a job
   * at the organization who has an email, no password and no code still valid.
   */
  emails?: readonly string[] | undefined;
  /** Named people who have a password get a code that replaces it (a forgotten password); only with `emails`. */
  reset?: boolean | undefined;
  /**
   * The whole roster: people holding a code still valid get a new one too, which revokes theirs (codes issued but
   * lost before they were sent on). Not with `emails`, which always replaces the codes of the people named.
   */
  reissue?: boolean | undefined;
  validForDays?: number | undefined;
  /** Named people only: refuse the whole call when any named email gets no code (the admin API), not skip it. */
  allOrNothing?: boolean | undefined;
  now: Date;
  /** Called with each batch of codes once it is committed; the codes are nowhere else. */
  onIssued: (batch: IssuedInvitation[]) => void | Promise<void>;
}

export interface InvitationResult {
  organizationId: string;
  organizationName: string;
  issued: number;
  /** Named emails that got no code, each with why. */
  problems: InvitationProblem[];
}

interface Candidate {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  password_hash: string | null;
}

/**
 * Issues one-time codes with which people of an organization set their password on the sign-up page. A code is
 * valid for `validForDays`, once; a person holds at most one (a new one revokes the old, and a unique index holds
 * it). Each transaction locks the people it invites and chooses them again after the locks, so two runs at once
 * never give one person two codes and never hand out a code the other revoked.
 */
export async function issueInvitations(db: Db, input: InvitationInput): Promise<InvitationResult> {
  const validForDays = input.validForDays ?? INVITATION_VALID_DAYS_DEFAULT;
  if (!Number.isSafeInteger(validForDays) || validForDays < 1 || validForDays > INVITATION_VALID_DAYS_MAX) {
    throw new InputError(`valid_for_days must be a whole number from 1 to ${INVITATION_VALID_DAYS_MAX}.`, {
      field: 'valid_for_days',
    });
  }
  if (input.reissue && input.emails) {
    throw new InputError('Naming people replaces their codes already: reissue is for the whole roster.', {
      field: 'reissue',
    });
  }
  if (input.reset && !input.emails) {
    throw new InputError('A reset replaces the passwords of people named by email only: name them.', {
      field: 'reset',
    });
  }
  const organization = await namedOrganization(db, input.organizationId);
  const expiresAt = new Date(input.now.getTime() + validForDays * 86_400_000);
  const issue = (tx: Tx, people: Candidate[]) =>
    insertInvitations(tx, organization.id, people, input.now, expiresAt);

  const result: InvitationResult = {
    organizationId: organization.id,
    organizationName: organization.name,
    issued: 0,
    problems: [],
  };
  if (input.emails) {
    const emails = namedEmails(input.emails);
    const batch = await withTransaction(db, async (tx) => {
      const found = await rosterPeople(tx, organization.id).where('p.email', 'in', emails).execute();
      await lockPeople(
        tx,
        found.map((person) => person.id),
      );
      // Read again after the locks: a sign-up or another run may have changed them while this waited.
      const people = found.length
        ? await rosterPeople(tx, organization.id)
            .where(
              'p.id',
              'in',
              found.map((person) => person.id),
            )
            .execute()
        : [];
      const byEmail = new Map(people.map((person) => [person.email, person]));
      const chosen: Candidate[] = [];
      for (const email of emails) {
        const person = byEmail.get(email);
        if (!person) {
          result.problems.push({
            email,
            detail: `no person with this email has a job at ${organization.name}.`,
          });
        } else if (person.password_hash && !input.reset) {
          result.problems.push({
            email,
            detail:
              'has a password already; if they lost it, a reset code replaces it (--reset; "reset": true in the admin API).',
          });
        } else chosen.push(person);
      }
      if (input.allOrNothing && result.problems.length > 0) {
        throw new InputRefusedError(
          `No code was issued. ${result.problems.map((problem) => `${problem.email}: ${problem.detail}`).join(' ')}`,
          { field: 'emails' },
        );
      }
      return issue(tx, chosen);
    });
    if (batch.length) await input.onIssued(batch);
    result.issued = batch.length;
    return result;
  }

  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const uninvited = (tx: Tx | Db) =>
      rosterPeople(tx, organization.id)
        .where('p.password_hash', 'is', null)
        .$if(!input.reissue, (query) =>
          query.where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('invitations as i')
                  .select('i.id')
                  .whereRef('i.person_id', '=', 'p.id')
                  .where('i.used_at', 'is', null)
                  .where('i.revoked_at', 'is', null)
                  .where('i.expires_at', '>', input.now),
              ),
            ),
          ),
        );
    const ids = (
      await uninvited(db).where('p.id', '>', after).orderBy('p.id').limit(BATCH_PEOPLE).execute()
    ).map((person) => person.id);
    if (ids.length === 0) break;
    after = ids.at(-1)!;
    const batch = await withTransaction(db, async (tx) => {
      await lockPeople(tx, ids);
      return issue(tx, await uninvited(tx).where('p.id', 'in', ids).orderBy('p.id').execute());
    });
    if (batch.length) await input.onIssued(batch);
    result.issued += batch.length;
  }
  return result;
}

function namedEmails(given: readonly string[]): string[] {
  if (given.length === 0 || given.length > INVITATION_EMAILS_MAX) {
    throw new InputError(`Name 1 to ${INVITATION_EMAILS_MAX} emails.`, { field: 'emails' });
  }
  const emails = [...new Set(given.map(normalizeEmail))];
  for (const email of emails) {
    if (!isEmail(email))
      throw new InputError(`"${email.slice(0, 80)}" is not an email address.`, { field: 'emails' });
  }
  return emails;
}

/** People with a job at the organization and an email to sign in with. */
function rosterPeople(db: Tx | Db, organizationId: string) {
  return db
    .selectFrom('people as p')
    .select(['p.id', 'p.first_name', 'p.last_name', 'p.password_hash'])
    .select(sql<string>`p.email`.as('email'))
    .where('p.email', 'is not', null)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('jobs')
          .select('jobs.id')
          .whereRef('jobs.person_id', '=', 'p.id')
          .where('jobs.organization_id', '=', organizationId),
      ),
    );
}

/** Revokes any code the people hold and gives each a new one; the caller holds their locks. */
async function insertInvitations(
  tx: Tx,
  organizationId: string,
  people: Candidate[],
  now: Date,
  expiresAt: Date,
): Promise<IssuedInvitation[]> {
  if (people.length === 0) return [];
  const ids = people.map((person) => person.id);
  await tx
    .updateTable('invitations')
    .set({ revoked_at: now })
    .where('person_id', 'in', ids)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .execute();
  const issued = people.map((person) => ({
    id: randomUUID(),
    personId: person.id,
    email: person.email,
    firstName: person.first_name,
    lastName: person.last_name,
    code: newInvitationCode(),
    expiresAt,
    replacesPassword: person.password_hash !== null,
  }));
  await tx
    .insertInto('invitations')
    .values(
      issued.map((invitation) => ({
        id: invitation.id,
        person_id: invitation.personId,
        organization_id: organizationId,
        code_hash: invitationCodeHash(normalizeInvitationCode(invitation.code)!),
        replaces_password: invitation.replacesPassword,
        created_at: now,
        expires_at: expiresAt,
      })),
    )
    .execute();
  return issued;
}
