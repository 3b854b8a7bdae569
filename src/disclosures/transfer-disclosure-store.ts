import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema.ts';

/** What was disclosed for one advance, as the operator reads it (`ewa transfers disclosure`, /admin). */
export interface TransferDisclosureView {
  transfer_id: string;
  amount: number;
  fee: number;
  amount_received: number;
  currency: string;
  destination_account_id: string;
  schedule: string;
  /** YYYY-MM-DD */
  expected_on: string;
  debit_on: string;
  disclosure_id: string | null;
  disclosure_version: number | null;
  acknowledged_at: string | null;
  created_at: string;
}

export async function readTransferDisclosure(
  db: Kysely<DB>,
  transferId: string,
): Promise<TransferDisclosureView | undefined> {
  const { rows } = await sql<
    Record<string, unknown>
  >`select transfer_id, amount_minor, fee_minor, received_minor,
      currency, destination_account_id, schedule, expected_on::text as expected_on, debit_on::text as debit_on,
      document_id, document_version, acknowledged_at, created_at
    from transfer_disclosures where transfer_id = ${transferId}`.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  const instant = (value: unknown) =>
    value === null ? null : new Date(value as string | Date).toISOString();
  return {
    transfer_id: row.transfer_id as string,
    amount: Number(row.amount_minor),
    fee: Number(row.fee_minor),
    amount_received: Number(row.received_minor),
    currency: (row.currency as string).trim(),
    destination_account_id: row.destination_account_id as string,
    schedule: row.schedule as string,
    expected_on: row.expected_on as string,
    debit_on: row.debit_on as string,
    disclosure_id: (row.document_id as string | null) ?? null,
    disclosure_version: row.document_version === null ? null : Number(row.document_version),
    acknowledged_at: instant(row.acknowledged_at),
    created_at: instant(row.created_at) as string,
  };
}
