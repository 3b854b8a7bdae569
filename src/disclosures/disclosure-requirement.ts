import { type Kysely, sql } from 'kysely';
import { citation, type Jurisdiction, jurisdictionOf, rulesOfKind } from '../compliance/jurisdiction.ts';
import type { RuleBook } from '../compliance/rule-book.ts';
import { RULES_VERSION_SETTING } from '../compliance/rule-store.ts';
import type { DB } from '../db/schema.ts';
import type { DisclosureDocument } from './disclosure-document.ts';
import { currentDocument } from './document-store.ts';

/** What a person must accept now, by the rules of their state on the day of their employer (UTC without a job). */
export interface DisclosureRequirement {
  jurisdiction: Jurisdiction;
  /** The current document, when a DISCLOSURE_BEFORE_FIRST_TRANSFER rule applies; undefined when none does. */
  document: DisclosureDocument | undefined;
}

export async function disclosureRequirement(
  db: Kysely<DB>,
  book: RuleBook,
  personId: string,
  now: Date,
): Promise<DisclosureRequirement | undefined> {
  const { rows } = await sql<{ state: string | null; time_zone: string | null; version: string | null }>`
    select trim(pe.state_of_residence) as state,
      (select pol.time_zone from jobs j join organization_policies pol on pol.organization_id = j.organization_id
        where j.person_id = pe.id order by j.created_at, j.id limit 1) as time_zone,
      (select s.value #>> '{}' from app_settings s where s.key = ${RULES_VERSION_SETTING}) as version
    from people pe where pe.id = ${personId}`.execute(db);
  const row = rows[0];
  if (!row?.state) return undefined;
  const rules = await book.at(db, Number(row.version ?? 0));
  const jurisdiction = jurisdictionOf(rules, row.state, now, row.time_zone ?? 'UTC');
  const required = rulesOfKind(jurisdiction, 'DISCLOSURE_BEFORE_FIRST_TRANSFER').length > 0;
  return { jurisdiction, document: required ? await currentDocument(db, row.state, now) : undefined };
}

/** "Utah (UT-DISCLOSURE, Utah Code Ann. 13-78)": the rule that asks for the disclosure, for messages. */
export function disclosureCitation(jurisdiction: Jurisdiction): string {
  const rule = rulesOfKind(jurisdiction, 'DISCLOSURE_BEFORE_FIRST_TRANSFER')[0];
  return rule ? `${jurisdiction.stateName} ${citation(rule)}` : jurisdiction.stateName;
}
