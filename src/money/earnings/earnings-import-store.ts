import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';

/** A job as an earnings import needs it: whether it may be paid, and how. */
export interface ImportJob {
  id: string;
  primaryIdentifier: string;
  activationStatus: string;
  wageFrequency: string;
  wageRateMinor: number;
  wageCurrency: string;
}

/** The organization's jobs of these primary identifiers, keyed by identifier. */
export async function findJobsByIdentifier(
  db: Db,
  organizationId: string,
  identifiers: readonly string[],
): Promise<Map<string, ImportJob>> {
  const { rows } = await sql<{
    id: string;
    external_primary_identifier: string;
    activation_status: string;
    wage_frequency: string;
    wage_rate_minor: number | string;
    wage_currency: string;
  }>`select id, external_primary_identifier, activation_status, wage_frequency, wage_rate_minor, wage_currency
    from jobs
    where organization_id = ${organizationId} and external_primary_identifier = any(${[...new Set(identifiers)]}::text[])`.execute(
    db,
  );
  return new Map(
    rows.map((row) => [
      row.external_primary_identifier,
      {
        id: row.id,
        primaryIdentifier: row.external_primary_identifier,
        activationStatus: row.activation_status,
        wageFrequency: row.wage_frequency,
        wageRateMinor: Number(row.wage_rate_minor),
        wageCurrency: row.wage_currency.trim(),
      },
    ]),
  );
}
