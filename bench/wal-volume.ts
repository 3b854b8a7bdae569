import { adminQuery } from './money-fixture.ts';

/** Write-ahead log written by the whole cluster so far (pg_stat_wal): records and bytes. */
export interface WalVolume {
  records: number;
  bytes: number;
}

export async function walSoFar(): Promise<WalVolume> {
  const { rows } = await adminQuery(
    'select wal_records::text as records, wal_bytes::text as bytes from pg_stat_wal',
  );
  return { records: Number(rows[0].records), bytes: Number(rows[0].bytes) };
}

/** The log written between two readings, per unit of work (an advance, a TPC-B transaction). */
export function walPerUnit(before: WalVolume, after: WalVolume, units: number): WalVolume {
  return { records: (after.records - before.records) / units, bytes: (after.bytes - before.bytes) / units };
}

export function formatWal(wal: WalVolume | undefined): string {
  return wal
    ? `${wal.records.toFixed(1)} records, ${Math.round(wal.bytes).toLocaleString('en-US')} bytes`
    : '–';
}
