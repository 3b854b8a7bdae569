import type { Db } from '../../db/database.ts';
import type { Page } from '../../db/keyset-page.ts';
import { idAsShown } from '../../domain/uuid.ts';
import { AppError } from '../../errors/app-error.ts';
import type { TransferView } from '../../money/advances/advance-service.ts';
import { fundingSourceOf, transferOf } from '../../money/advances/transfer.ts';
import type { ListQuery } from '../../platform/list-query.ts';
import { findTransfersOfPerson, readTransferOfPerson } from './store.ts';

export function transferNotFound(id: string): AppError {
  return new AppError('RECORD_NOT_FOUND', {
    detail: `No transfer ${idAsShown(id)} is visible to this token.`,
  });
}

/**
 * One page of a person's transfers with their funding sources, oldest first, with one more when another page
 * follows; each with its sort key as text, for the next page's cursor.
 */
export async function listTransfers(
  db: Db,
  personId: string,
  query: ListQuery,
  page: Page,
): Promise<(TransferView & { pageKey: string })[]> {
  const rows = await findTransfersOfPerson(db, personId, query, page);
  return rows.map((row) => ({
    transfer: transferOf(row),
    sources: row.funding_sources.map(fundingSourceOf),
    preview: false,
    pageKey: row.page_key,
  }));
}

/** One transfer of the person; RECORD_NOT_FOUND when it is not theirs or does not exist. */
export async function readTransfer(db: Db, personId: string, id: string): Promise<TransferView> {
  const row = await readTransferOfPerson(db, personId, id);
  if (!row) throw transferNotFound(id);
  return { transfer: transferOf(row), sources: row.funding_sources.map(fundingSourceOf), preview: false };
}
