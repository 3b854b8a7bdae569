import {
  INVITATION_CODE_CHARACTERS,
  invitationCodeHash,
  normalizeInvitationCode,
} from '../crypto/invitation-codes.ts';
import { hashPassword } from '../crypto/passwords.ts';
import type { Db } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import { isEmail, normalizeEmail, passwordProblem, type SignUpResult } from './accounts.ts';
import { endSignIns } from './person-sign-ins.ts';

const USED =
  'This invitation code has been used. Sign in with the password set with it, or ask your employer for a new code.';
const NO_MATCH: SignUpResult = {
  problem:
    'We could not match this email and invitation code. Check both against the invitation your employer sent.',
  field: 'invitation_code',
};

/**
 * A person sets their password with the one-time code their employer issued (operator/invitations.ts), or replaces
 * it with a reset code. Until the email and the code match, the answer is the same whatever did not match; past
 * that, whoever holds the code is told plainly why it cannot be used. A reset code ends every sign-in made with the
 * password it replaces.
 */
export async function signUpWithInvitation(
  db: Db,
  input: { email: string; code: string; password: string; now: Date },
): Promise<SignUpResult> {
  const email = normalizeEmail(input.email);
  if (!isEmail(email))
    return { problem: 'Enter the email address your employer has for you.', field: 'email' };
  if (!input.code.trim())
    return { problem: 'Enter the invitation code your employer gave you.', field: 'invitation_code' };
  const code = normalizeInvitationCode(input.code);
  if (!code) {
    return {
      problem: `An invitation code has ${INVITATION_CODE_CHARACTERS} letters and digits (dashes optional), like 7K3QM-X9D2A-0B4TR-HV6NC.`,
      field: 'invitation_code',
    };
  }
  const badPassword = passwordProblem(input.password);
  if (badPassword) return badPassword;
  const hash = await hashPassword(input.password);
  // The person's lock first (db/lock-order.ts), then the code in a statement of its own: an issue or a use of a
  // code by another request holds the same lock, so this reads the code as that one left it.
  return withTransaction(db, async (tx) => {
    const person = await tx
      .selectFrom('people')
      .select('id')
      .where('email', '=', email)
      .forUpdate()
      .executeTakeFirst();
    if (!person) return NO_MATCH;
    const invitation = await tx
      .selectFrom('invitations as i')
      .innerJoin('people as p', 'p.id', 'i.person_id')
      .select(['i.id', 'i.expires_at', 'i.used_at', 'i.revoked_at', 'i.replaces_password', 'p.password_hash'])
      .where('i.code_hash', '=', invitationCodeHash(code))
      .where('i.person_id', '=', person.id)
      .executeTakeFirst();
    if (!invitation) return NO_MATCH;
    const refused = (problem: string): SignUpResult => ({ problem, field: 'invitation_code' });
    if (invitation.used_at) return refused(USED);
    if (invitation.revoked_at)
      return refused(
        'A newer invitation code replaced this one. Use the newest code your employer gave you.',
      );
    if (invitation.expires_at.getTime() <= input.now.getTime())
      return refused(
        `This invitation code expired on ${invitation.expires_at.toISOString().slice(0, 10)}. Ask your employer for a new one.`,
      );
    if (invitation.password_hash && !invitation.replaces_password)
      return refused(
        'You have a password already: sign in with it. If you lost it, ask your employer for a reset code.',
      );
    // Conditional as well as locked: a code is used once even by a writer that skipped the person's lock.
    const used = await tx
      .updateTable('invitations')
      .set({ used_at: input.now })
      .where('id', '=', invitation.id)
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (used.numUpdatedRows !== 1n) return refused(USED);
    await tx
      .updateTable('people')
      .set({ password_hash: hash, updated_at: input.now })
      .where('id', '=', person.id)
      .execute();
    if (invitation.password_hash) await endSignIns(tx, person.id, input.now);
    return { personId: person.id };
  });
}
