import {
  DECOY_PASSWORD_HASH,
  hashPassword,
  PASSWORD_LENGTH_MAX,
  PASSWORD_LENGTH_MIN,
  verifyPassword,
} from '../crypto/passwords.ts';
import type { Db } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
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
  | { problem: string; field: 'email' | 'employee_id' | 'password' };

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
  if (input.password.length < PASSWORD_LENGTH_MIN || input.password.length > PASSWORD_LENGTH_MAX) {
    return {
      problem: `Choose a password of ${PASSWORD_LENGTH_MIN} to ${PASSWORD_LENGTH_MAX} characters.`,
      field: 'password',
    };
  }
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
