import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Caller } from '../../platform/access-tokens.ts';
import { personVisibleTo } from './visibility.ts';

export interface PersonRow {
  id: string;
  state_of_residence: string | null;
  disallow_reason: string | null;
  card_product_eligible: boolean;
  card_product_enrolled: boolean;
}

const COLUMNS = [
  'people.id',
  'people.state_of_residence',
  'people.disallow_reason',
  'people.card_product_eligible',
  'people.card_product_enrolled',
] as const;

export async function findVisiblePerson(
  db: Kysely<DB>,
  caller: Caller,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<PersonRow | undefined> {
  let query = db
    .selectFrom('people')
    .select(COLUMNS)
    .where('people.id', '=', id)
    .where(personVisibleTo(caller, 'people.id'));
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function updatePersonStateOfResidence(
  db: Kysely<DB>,
  id: string,
  stateOfResidence: string,
  now: Date,
): Promise<PersonRow> {
  return db
    .updateTable('people')
    .set({
      state_of_residence: stateOfResidence,
      state_of_residence_source: 'SELF_DECLARED',
      updated_at: now,
    })
    .where('id', '=', id)
    .returning([
      'id',
      'state_of_residence',
      'disallow_reason',
      'card_product_eligible',
      'card_product_enrolled',
    ])
    .executeTakeFirstOrThrow();
}
