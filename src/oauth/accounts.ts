import {
  DECOY_PASSWORD_HASH,
  hashPassword,
  PASSWORD_LENGTH_MAX,
  PASSWORD_LENGTH_MIN,
  verifyPassword,
} from '../crypto/passwords.ts';
import type { Db } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import { SCOPE_CLAIMS } from './scopes.ts';

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** An address as people are known by: something, @, something, without spaces. */
export function isEmail(normalizedEmail: string): boolean {
  return EMAIL.test(normalizedEmail);
}

/** The person whose email and password these are, or undefined; takes as long either way. */
export async function authenticate(db: Db, email: string, password: string): Promise<string | undefined> {
  const person = EMAIL.test(normalizeEmail(email))
    ? await db
        .selectFrom('people')
        .select(['id', 'password_hash'])
        .where('email', '=', normalizeEmail(email))
        .executeTakeFirst()
    : undefined;
  const matches = await verifyPassword(
    password.slice(0, PASSWORD_LENGTH_MAX),
    person?.password_hash ?? DECOY_PASSWORD_HASH,
  );
  return matches && person?.password_hash ? person.id : undefined;
}

export type SignUpResult =
  | { personId: string }
  | { problem: string; field: 'email' | 'employee_id' | 'invitation_code' | 'password' };

export function passwordProblem(password: string): SignUpResult | undefined {
  if (password.length >= PASSWORD_LENGTH_MIN && password.length <= PASSWORD_LENGTH_MAX) return undefined;
  return {
    problem: `Choose a password of ${PASSWORD_LENGTH_MIN} to ${PASSWORD_LENGTH_MAX} characters.`,
    field: 'password',
  };
}

/**
 * A worker on an employer's roster sets a password: the roster email and the employee id of one of that person's
 * jobs must match, and the person must not have a password yet. The answer does not say which part did not
 * match, so the form cannot be used to find out who is on a roster.
 */
export async function signUp(
  db: Db,
  input: { email: string; employeeId: string; password: string },
): Promise<SignUpResult> {
  const email = normalizeEmail(input.email);
  if (!EMAIL.test(email))
    return { problem: 'Enter the email address your employer has for you.', field: 'email' };
  if (!input.employeeId.trim()) return { problem: 'Enter your employee ID.', field: 'employee_id' };
  const badPassword = passwordProblem(input.password);
  if (badPassword) return badPassword;
  const hash = await hashPassword(input.password);
  // The person's lock first, then the match in a statement of its own, which sees a roster change that held the
  // lock (db/lock-order.ts): a statement that waited for a row would judge the job as it was before.
  const updated = await withTransaction(db, async (tx) => {
    const person = await tx
      .selectFrom('people')
      .select('id')
      .where('email', '=', email)
      .where('password_hash', 'is', null)
      .forUpdate()
      .executeTakeFirst();
    if (!person) return undefined;
    return tx
      .updateTable('people')
      .set({ password_hash: hash, updated_at: new Date() })
      .where('id', '=', person.id)
      .where('password_hash', 'is', null)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('jobs')
            .select('jobs.id')
            .whereRef('jobs.person_id', '=', 'people.id')
            .where('jobs.external_employee_id', '=', input.employeeId.trim()),
        ),
      )
      .returning('id')
      .executeTakeFirst();
  });
  return updated
    ? { personId: updated.id }
    : {
        problem:
          'We could not match these details to an employee without a password. Check them, or sign in if you already have a password.',
        field: 'email',
      };
}

/** The standard claims of a person (OpenID Connect Core §5.1), all of them; which ones are given depends on scope. */
export interface PersonClaims {
  sub: string;
  name?: string;
  given_name?: string;
  family_name?: string;
  email?: string;
  email_verified?: boolean;
}

/** Who a person is, for the consent page and for the claims of their tokens; undefined if there is no such person. */
export async function findPerson(
  db: Db,
  id: string,
): Promise<{ id: string; firstName: string; lastName: string; email: string | null } | undefined> {
  const row = await db
    .selectFrom('people')
    .select(['id', 'first_name', 'last_name', 'email'])
    .where('id', '=', id)
    .executeTakeFirst();
  return row && { id: row.id, firstName: row.first_name, lastName: row.last_name, email: row.email };
}

export function fullName(person: { firstName: string; lastName: string }): string {
  return [person.firstName.trim(), person.lastName.trim()].filter(Boolean).join(' ');
}

/**
 * The claims of a person's record. The email is the one they sign in with, which their employer's roster gives;
 * `email_verified` is false because nothing here proves the person controls that address: sign-up matches the
 * roster's email and an employee ID, and no message is ever sent to the address. (If an email confirmation step is
 * added, record it on the person and say true here.) A claim with no value is left out.
 */
export function claimsOf(person: {
  id: string;
  firstName: string;
  lastName: string;
  email: string | null;
}): PersonClaims {
  const name = fullName(person);
  return {
    sub: person.id,
    ...(name ? { name } : {}),
    ...(person.firstName.trim() ? { given_name: person.firstName.trim() } : {}),
    ...(person.lastName.trim() ? { family_name: person.lastName.trim() } : {}),
    ...(person.email ? { email: person.email, email_verified: false } : {}),
  };
}

/** The claims of the scopes given (SCOPE_CLAIMS), out of all of a person's claims. */
export function claimsForScopes(claims: PersonClaims, scopes: Iterable<string>): Partial<PersonClaims> {
  const names = new Set<string>();
  for (const scope of scopes) {
    if (Object.hasOwn(SCOPE_CLAIMS, scope))
      for (const name of SCOPE_CLAIMS[scope as keyof typeof SCOPE_CLAIMS]) names.add(name);
  }
  return Object.fromEntries(Object.entries(claims).filter(([name]) => names.has(name)));
}
