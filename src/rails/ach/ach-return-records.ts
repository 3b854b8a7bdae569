/**
 * What the ACH rail kept of the return files it read, for operators (`ewa ach returns`): each file with what came of
 * it (read, or refused and why), and the returns that matched no entry of ours, which nothing applied.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { RETURN_REASONS } from './nacha-returns.ts';

/** The most rows a listing gives, latest first. */
export const ACH_RETURN_LISTING_MAX = 1000;

export interface ReturnFileRecord {
  sha256: string;
  file_name: string;
  read_at: string;
  status: 'READ' | 'REFUSED';
  returns: number;
  unmatched: number;
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
    unmatched: number;
    error: string | null;
  }>`select sha256, file_name, read_at, returns, unmatched, error from ach_return_files
    order by read_at desc, file_name desc, sha256 limit ${limit}`.execute(db);
  return rows.map((row) => ({
    sha256: row.sha256,
    file_name: row.file_name,
    read_at: new Date(row.read_at).toISOString(),
    status: row.error === null ? 'READ' : 'REFUSED',
    returns: Number(row.returns),
    unmatched: Number(row.unmatched),
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
