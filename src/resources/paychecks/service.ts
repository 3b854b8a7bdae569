import type { Db } from '../../db/database.ts';
import { idAsShown } from '../../domain/uuid.ts';
import { AppError } from '../../errors/app-error.ts';
import { type Paycheck, paycheckOf } from '../../money/earnings/paychecks.ts';
import type { Caller } from '../../platform/access-tokens.ts';
import { findVisiblePaycheck } from './store.ts';

export function paycheckNotFound(id: string): AppError {
  return new AppError('RECORD_NOT_FOUND', {
    detail: `No paycheck ${idAsShown(id)} is visible to this token.`,
  });
}

export async function readPaycheck(db: Db, caller: Caller, id: string): Promise<Paycheck> {
  const row = await findVisiblePaycheck(db, caller, id);
  if (!row) throw paycheckNotFound(id);
  return paycheckOf(row);
}
