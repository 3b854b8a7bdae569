/**
 * What the ACH rail kept of the return files it read, for operators (`ewa ach returns`): each file with what came of
 * it (read, or refused and why), the returns that matched no entry of ours, which nothing applied, and the
 * notifications of change with the entry each is about, which nothing applies either.
 */
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { type AchReturnKey, type AchReturnListing, encodeAchReturnCursor } from './ach-return-cursor.ts';
import { CHANGE_REASONS, RETURN_REASONS } from './nacha-returns.ts';

/** The most rows a page of a listing gives, latest first. */
export const ACH_RETURN_LISTING_MAX = 1000;

/** Where a page starts (after `after`, the last row of the page before, when given) and how many rows it holds. */
export interface AchReturnPageRequest {
  size: number;
  after?: AchReturnKey | undefined;
}

/** A page of a listing: its rows, and the cursor of the next page when more rows follow (null on the last). */
export interface AchReturnPage<R> {
  items: R[];
  next: string | null;
}

/** A row's time as text, exact to the microsecond (as keyset-page.ts's pageKeySql), for its cursor. */
function timeText(column: string): RawBuilder<string> {
  return sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/**
 * The rows after the cursor in the listings' order: time descending, then file name descending, then the file's
 * SHA-256 and the position ascending (the identity, which makes the order total). The time bound alone (`<=`) is
 * what the index on the time reads from; the rest only sorts out the rows of the cursor's own instant.
 */
function afterSql(
  columns: { at: string; fileName: string; sha256: string; position?: string },
  after: AchReturnKey | undefined,
): RawBuilder<SqlBool> {
  if (!after) return sql<SqlBool>`true`;
  const at = sql.ref(columns.at);
  const fileName = sql.ref(columns.fileName);
  const sha256 = sql.ref(columns.sha256);
  const time = sql`${after.at}::timestamptz`;
  const identity = columns.position
    ? sql`(${sha256}, ${sql.ref(columns.position)}) > (${after.sha256}::text, ${after.position}::integer)`
    : sql`${sha256} > ${after.sha256}::text`;
  return sql<SqlBool>`${at} <= ${time} and (${at} < ${time} or ${fileName} < ${after.fileName}::text
    or (${fileName} = ${after.fileName}::text and ${identity}))`;
}

/** The page of rows fetched one more than it holds: the cursor of its last row when more follow. */
function pageOf<R, Row extends { page_key: string; file_name: string }>(
  listing: AchReturnListing,
  rows: readonly Row[],
  size: number,
  identity: (row: Row) => { sha256: string; position: number },
  record: (row: Row) => R,
): AchReturnPage<R> {
  const kept = rows.slice(0, size);
  const last = kept[kept.length - 1];
  const next =
    rows.length > size && last
      ? encodeAchReturnCursor(listing, { at: last.page_key, fileName: last.file_name, ...identity(last) })
      : null;
  return { items: kept.map(record), next };
}

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
export async function listReturnFiles(
  db: Db,
  page: AchReturnPageRequest,
): Promise<AchReturnPage<ReturnFileRecord>> {
  const { rows } = await sql<{
    sha256: string;
    file_name: string;
    read_at: Date;
    page_key: string;
    returns: number;
    applied: number;
    unmatched: number;
    notifications: number;
    error: string | null;
  }>`select f.sha256, f.file_name, f.read_at, ${timeText('f.read_at')} as page_key, f.returns, f.unmatched, f.error,
      (select count(*) from ach_returns r where r.file_sha256 = f.sha256)::integer as applied,
      (select count(*) from ach_change_notifications n where n.file_sha256 = f.sha256)::integer as notifications
    from ach_return_files f
    where ${afterSql({ at: 'f.read_at', fileName: 'f.file_name', sha256: 'f.sha256' }, page.after)}
    order by f.read_at desc, f.file_name desc, f.sha256 limit ${page.size + 1}`.execute(db);
  return pageOf(
    'ach-return-files',
    rows,
    page.size,
    (row) => ({ sha256: row.sha256, position: 0 }),
    (row) => ({
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
    }),
  );
}

/** The returns that matched no entry of ours (or not its amount), latest first, each as its file gave it. */
export async function listUnmatchedReturns(
  db: Db,
  page: AchReturnPageRequest,
): Promise<AchReturnPage<UnmatchedReturnRecord>> {
  const { rows } = await sql<{
    file_sha256: string;
    file_name: string;
    position: number;
    received_at: Date;
    page_key: string;
    original_trace_number: string;
    amount_minor: number | string;
    return_code: string;
    transaction_code: number;
    individual_id: string;
    addenda_information: string;
  }>`select u.file_sha256, f.file_name, u.position, u.received_at, ${timeText('u.received_at')} as page_key,
      u.original_trace_number, u.amount_minor, u.return_code, u.transaction_code, u.individual_id,
      u.addenda_information
    from ach_unmatched_returns u join ach_return_files f on f.sha256 = u.file_sha256
    where ${afterSql({ at: 'u.received_at', fileName: 'f.file_name', sha256: 'u.file_sha256', position: 'u.position' }, page.after)}
    order by u.received_at desc, f.file_name desc, u.file_sha256, u.position limit ${page.size + 1}`.execute(
    db,
  );
  return pageOf(
    'ach-unmatched-returns',
    rows,
    page.size,
    (row) => ({ sha256: row.file_sha256, position: Number(row.position) }),
    (row) => ({
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
    }),
  );
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
export async function listChangeNotifications(
  db: Db,
  page: AchReturnPageRequest,
): Promise<AchReturnPage<ChangeNotificationRecord>> {
  const { rows } = await sql<{
    file_sha256: string;
    file_name: string;
    position: number;
    received_at: Date;
    page_key: string;
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
  }>`select n.file_sha256, f.file_name, n.position, n.received_at, ${timeText('n.received_at')} as page_key,
      n.original_trace_number, n.change_code,
      n.corrected_data, n.transaction_code, n.individual_id, n.original_receiving_dfi, n.instruction_id,
      e.reference, e.purpose, to_char(e.effective_date, 'YYYY-MM-DD') as effective_date, e.amount_minor,
      e.destination_account_id as account_id, a.person_id, a.routing_number
    from ach_change_notifications n
      join ach_return_files f on f.sha256 = n.file_sha256
      left join ach_entries e on e.instruction_id = n.instruction_id
      left join accounts a on a.id = e.destination_account_id
    where ${afterSql({ at: 'n.received_at', fileName: 'f.file_name', sha256: 'n.file_sha256', position: 'n.position' }, page.after)}
    order by n.received_at desc, f.file_name desc, n.file_sha256, n.position limit ${page.size + 1}`.execute(
    db,
  );
  return pageOf(
    'ach-change-notifications',
    rows,
    page.size,
    (row) => ({ sha256: row.file_sha256, position: Number(row.position) }),
    (row) => ({
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
    }),
  );
}
