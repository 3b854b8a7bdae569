/**
 * What the ACH rail kept of the return files it read, for operators (`ewa ach returns`): each file with what came of
 * it (read, or refused and why), the returns that matched no entry of ours, which nothing applied, and the
 * notifications of change with the entry each is about, which nothing applies either.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { CHANGE_REASONS, RETURN_REASONS } from './nacha-returns.ts';

/** The most rows a listing gives, latest first. */
export const ACH_RETURN_LISTING_MAX = 1000;

export interface ReturnFileRecord {
  sha256: string;
  file_name: string;
  read_at: string;
  status: 'READ' | 'REFUSED';
  returns: number;
  /** Returns this file was the first to tell of their entry: applied by it. */
  applied: number;
  unmatched: number;
  /**
   * Returns of an entry already returned (by an earlier file, or twice in this one): matched, applied by none.
   * What a file's returns are: applied + already_returned + unmatched.
   */
  already_returned: number;
  notifications: number;
  error: string | null;
}

export interface UnmatchedReturnRecord {
  file_sha256: string;
  file_name: string;
  position: number;
  received_at: string;
  original_trace_number: string;
  amount_minor: number;
  return_code: string;
  /** Our words for the code (RETURN_REASONS), null for a code we have none for. */
  return_reason: string | null;
  transaction_code: number;
  individual_id: string;
  addenda_information: string;
}

/** The return files read, latest first: a refused one with its reason. */
export async function listReturnFiles(db: Db, limit: number): Promise<ReturnFileRecord[]> {
  const { rows } = await sql<{
    sha256: string;
    file_name: string;
    read_at: Date;
    returns: number;
    applied: number;
    unmatched: number;
    notifications: number;
    error: string | null;
  }>`select f.sha256, f.file_name, f.read_at, f.returns, f.unmatched, f.error,
      (select count(*) from ach_returns r where r.file_sha256 = f.sha256)::integer as applied,
      (select count(*) from ach_change_notifications n where n.file_sha256 = f.sha256)::integer as notifications
    from ach_return_files f
    order by f.read_at desc, f.file_name desc, f.sha256 limit ${limit}`.execute(db);
  return rows.map((row) => ({
    sha256: row.sha256,
    file_name: row.file_name,
    read_at: new Date(row.read_at).toISOString(),
    status: row.error === null ? 'READ' : 'REFUSED',
    returns: Number(row.returns),
    applied: Number(row.applied),
    unmatched: Number(row.unmatched),
    already_returned: Math.max(0, Number(row.returns) - Number(row.unmatched) - Number(row.applied)),
    notifications: Number(row.notifications),
    error: row.error,
  }));
}

/** The returns that matched no entry of ours (or not its amount), latest first, each as its file gave it. */
export async function listUnmatchedReturns(db: Db, limit: number): Promise<UnmatchedReturnRecord[]> {
  const { rows } = await sql<{
    file_sha256: string;
    file_name: string;
    position: number;
    received_at: Date;
    original_trace_number: string;
    amount_minor: number | string;
    return_code: string;
    transaction_code: number;
    individual_id: string;
    addenda_information: string;
  }>`select u.file_sha256, f.file_name, u.position, u.received_at, u.original_trace_number, u.amount_minor,
      u.return_code, u.transaction_code, u.individual_id, u.addenda_information
    from ach_unmatched_returns u join ach_return_files f on f.sha256 = u.file_sha256
    order by u.received_at desc, f.file_name desc, u.file_sha256, u.position limit ${limit}`.execute(db);
  return rows.map((row) => ({
    file_sha256: row.file_sha256,
    file_name: row.file_name,
    position: Number(row.position),
    received_at: new Date(row.received_at).toISOString(),
    original_trace_number: row.original_trace_number,
    amount_minor: Number(row.amount_minor),
    return_code: row.return_code,
    return_reason: RETURN_REASONS[row.return_code] ?? null,
    transaction_code: Number(row.transaction_code),
    individual_id: row.individual_id,
    addenda_information: row.addenda_information,
  }));
}

export interface ChangeNotificationRecord {
  file_sha256: string;
  file_name: string;
  position: number;
  received_at: string;
  original_trace_number: string;
  change_code: string;
  /** Our words for the code and where the corrected data puts each field (CHANGE_REASONS); null when unknown. */
  change_reason: string | null;
  corrected_data: string;
  transaction_code: number;
  individual_id: string;
  original_receiving_dfi: string;
  /** The entry it is about, with the bank account paid and its person; null when it names none of ours. */
  entry: {
    instruction_id: string;
    reference: string;
    purpose: string;
    effective_date: string;
    amount_minor: number;
    account_id: string;
    person_id: string | null;
    /** The account's routing number now (its number is sealed, never shown). */
    account_routing_number: string | null;
  } | null;
}

/** The notifications of change, latest first, each with the entry it is about. */
export async function listChangeNotifications(db: Db, limit: number): Promise<ChangeNotificationRecord[]> {
  const { rows } = await sql<{
    file_sha256: string;
    file_name: string;
    position: number;
    received_at: Date;
    original_trace_number: string;
    change_code: string;
    corrected_data: string;
    transaction_code: number;
    individual_id: string;
    original_receiving_dfi: string;
    instruction_id: string | null;
    reference: string | null;
    purpose: string | null;
    effective_date: string | null;
    amount_minor: number | string | null;
    account_id: string | null;
    person_id: string | null;
    routing_number: string | null;
  }>`select n.file_sha256, f.file_name, n.position, n.received_at, n.original_trace_number, n.change_code,
      n.corrected_data, n.transaction_code, n.individual_id, n.original_receiving_dfi, n.instruction_id,
      e.reference, e.purpose, to_char(e.effective_date, 'YYYY-MM-DD') as effective_date, e.amount_minor,
      e.destination_account_id as account_id, a.person_id, a.routing_number
    from ach_change_notifications n
      join ach_return_files f on f.sha256 = n.file_sha256
      left join ach_entries e on e.instruction_id = n.instruction_id
      left join accounts a on a.id = e.destination_account_id
    order by n.received_at desc, f.file_name desc, n.file_sha256, n.position limit ${limit}`.execute(db);
  return rows.map((row) => ({
    file_sha256: row.file_sha256,
    file_name: row.file_name,
    position: Number(row.position),
    received_at: new Date(row.received_at).toISOString(),
    original_trace_number: row.original_trace_number,
    change_code: row.change_code,
    change_reason: CHANGE_REASONS[row.change_code] ?? null,
    corrected_data: row.corrected_data,
    transaction_code: Number(row.transaction_code),
    individual_id: row.individual_id,
    original_receiving_dfi: row.original_receiving_dfi,
    entry:
      row.instruction_id === null
        ? null
        : {
            instruction_id: row.instruction_id,
            reference: row.reference!,
            purpose: row.purpose!,
            effective_date: row.effective_date!,
            amount_minor: Number(row.amount_minor),
            account_id: row.account_id!,
            person_id: row.person_id,
            account_routing_number: row.routing_number,
          },
  }));
}
