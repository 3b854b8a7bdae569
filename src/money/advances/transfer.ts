import type { Selectable } from 'kysely';
import type { FundingSourcesTable, TransfersTable } from '../../db/schema.ts';

/** A transfer as the money core reads and writes it (its columns, from the schema's types). */
export type TransferRow = Pick<
  Selectable<TransfersTable>,
  | 'id'
  | 'person_id'
  | 'origin_account_id'
  | 'origin_paycheck_id'
  | 'destination_account_id'
  | 'amount_minor'
  | 'fee_minor'
  | 'currency'
  | 'schedule'
  | 'status'
  | 'failure_reason'
  | 'rail_reference'
  | 'settle_after'
  | 'submitted_at'
  | 'resolved_at'
>;

/** Which paycheck funds how much of a transfer: estimated when it is made, final when it settles. */
export type FundingSourceRow = Pick<
  Selectable<FundingSourcesTable>,
  'transfer_id' | 'paycheck_id' | 'stage' | 'amount_minor' | 'currency'
>;

/** One of a person's accounts, as an advance's destination. */
export interface PersonAccountRow {
  id: string;
  account_type: string;
}

/** What decides whether a person may take advances at all. */
export interface PersonStanding {
  disallow_reason: string | null;
  state_of_residence: string | null;
}

/** A paycheck of a job that still has an accessible share not yet taken. */
export interface FundablePaycheck {
  id: string;
  remaining_minor: number;
}
