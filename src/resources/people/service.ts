import type { Db } from '../../db/database.ts';
import { withTransaction } from '../../db/transaction.ts';
import { isUsState } from '../../domain/us-states.ts';
import { idAsShown } from '../../domain/uuid.ts';
import { AppError } from '../../errors/app-error.ts';
import type { Caller } from '../../platform/access-tokens.ts';
import { findVisiblePerson, type PersonRow, updatePersonStateOfResidence } from './store.ts';

export function personNotFound(id: string): AppError {
  return new AppError('RECORD_NOT_FOUND', { detail: `No person ${idAsShown(id)} is visible to this token.` });
}

export async function readPerson(db: Db, caller: Caller, id: string): Promise<PersonRow> {
  const person = await findVisiblePerson(db, caller, id);
  if (!person) throw personNotFound(id);
  return person;
}

/** The one change a person may make to themselves: where they live, a USPS code of a state or DC. */
export async function changeStateOfResidence(
  db: Db,
  caller: Caller,
  id: string,
  stateOfResidence: string,
  now: Date,
): Promise<PersonRow> {
  if (!isUsState(stateOfResidence)) {
    throw new AppError('INVALID_PARAMETERS', {
      detail: `state_of_residence must be the two-letter code of a US state or DC in capitals, such as NY (got "${stateOfResidence}").`,
      source: { pointer: '/data/attributes/state_of_residence' },
    });
  }
  return withTransaction(db, async (tx) => {
    const person = await findVisiblePerson(tx, caller, id, { forUpdate: true });
    if (!person) throw personNotFound(id);
    if (person.state_of_residence === stateOfResidence) return person;
    return updatePersonStateOfResidence(tx, id, stateOfResidence, now);
  });
}
