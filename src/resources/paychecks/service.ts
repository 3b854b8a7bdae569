import type { Db } from '../../db/database.ts';
import { AppError } from '../../errors/app-error.ts';
import type { Caller } from '../../platform/access-tokens.ts';
import { findVisiblePaycheck, type PaycheckRow } from './store.ts';

export function paycheckNotFound(id: string): AppError {
  return new AppError('RECORD_NOT_FOUND', { detail: `No paycheck ${id} is visible to this token.` });
}

export async function readPaycheck(db: Db, caller: Caller, id: string): Promise<PaycheckRow> {
  const paycheck = await findVisiblePaycheck(db, caller, id);
  if (!paycheck) throw paycheckNotFound(id);
  return paycheck;
}
