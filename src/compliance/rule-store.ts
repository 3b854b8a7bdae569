import { type Kysely, sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import { withTransaction } from '../db/transaction.ts';
import { AppError } from '../errors/app-error.ts';
import { InputError } from '../errors/input-error.ts';
import { type ComplianceRule, checkRule, RULE_ID_PATTERN } from './compliance-rule.ts';
import type { RuleFile } from './state-rules.ts';

/**
 * The operator's overrides of the rule file (table compliance_rule_overrides, migration 0015) and the effective
 * rule set they make with it. Every write bumps `compliance_rules_version` in app_settings in its own transaction:
 * the bump comes first, so its row lock also queues writers of overrides one behind the other (a change of some
 * fields merges onto what the previous writer committed), and every server process reloads at its next advance.
 */

export const RULES_VERSION_SETTING = 'compliance_rules_version';

/** Where a rule of the effective set comes from. */
export type RuleOrigin = 'FILE' | 'FILE_CHANGED' | 'OPERATOR';

export interface EffectiveRule {
  rule: ComplianceRule;
  origin: RuleOrigin;
  /** False when switched off: it applies to no one. */
  enabled: boolean;
  /** Who changed it and when, for an override; null for a rule as the file has it. */
  changedBy: string | null;
  changedAt: Date | null;
}

interface OverrideRow {
  rule_id: string;
  rule: unknown;
  disabled: boolean;
  changed_by: string;
  changed_at: Date | string;
}

/** The file's rules with the overrides applied: replaced by id, switched off, or added; in the file's order, then by id. */
export function mergeRules(file: RuleFile, overrides: readonly OverrideRow[]): EffectiveRule[] {
  const byId = new Map(overrides.map((row) => [row.rule_id, row]));
  const of = (row: OverrideRow) => ({ changedBy: row.changed_by, changedAt: new Date(row.changed_at) });
  const merged: EffectiveRule[] = file.rules.map((rule) => {
    const row = byId.get(rule.id);
    if (!row) return { rule, origin: 'FILE', enabled: true, changedBy: null, changedAt: null };
    return {
      // Checked again on the way out: a row is never trusted to be of a shape this code still accepts.
      rule: row.rule === null ? rule : { ...checkRule(row.rule), id: rule.id },
      origin: row.rule === null ? 'FILE' : 'FILE_CHANGED',
      enabled: !row.disabled,
      ...of(row),
    };
  });
  const fileIds = new Set(file.rules.map((rule) => rule.id));
  const added = overrides
    .filter((row) => !fileIds.has(row.rule_id) && row.rule !== null)
    .sort((a, b) => a.rule_id.localeCompare(b.rule_id));
  for (const row of added)
    merged.push({
      rule: { ...checkRule(row.rule), id: row.rule_id },
      origin: 'OPERATOR',
      enabled: !row.disabled,
      ...of(row),
    });
  return merged;
}

/** The version counter and the overrides, read by one statement so that the two belong together. */
export async function readOverrides(db: Kysely<DB>): Promise<{ version: number; overrides: OverrideRow[] }> {
  const { rows } = await sql<{ version: string | null; overrides: OverrideRow[] | null }>`select
      (select value #>> '{}' from app_settings where key = ${RULES_VERSION_SETTING}) as version,
      (select json_agg(json_build_object('rule_id', rule_id, 'rule', rule, 'disabled', disabled,
        'changed_by', changed_by, 'changed_at', changed_at) order by rule_id)
        from compliance_rule_overrides) as overrides`.execute(db);
  const row = rows[0];
  return { version: Number(row?.version ?? 0), overrides: row?.overrides ?? [] };
}

export async function listRules(db: Kysely<DB>, file: RuleFile): Promise<EffectiveRule[]> {
  return mergeRules(file, (await readOverrides(db)).overrides);
}

function ruleIdOf(id: string): string {
  if (!RULE_ID_PATTERN.test(id))
    throw new InputError(
      `the rule id must be capitals, digits, dots, dashes or underscores, 1 to 64 of them (got "${id.slice(0, 70)}").`,
      { field: 'id' },
    );
  return id;
}

function noSuchRule(id: string): AppError {
  return new AppError('RECORD_NOT_FOUND', {
    detail: `No compliance rule ${id}: neither the rule file nor an override has it.`,
  });
}

/** Bumps the version first: its row lock queues every writer of overrides behind the one before. */
async function bumpVersion(tx: Kysely<DB>): Promise<void> {
  await sql`insert into app_settings (key, value) values (${RULES_VERSION_SETTING}, '1')
    on conflict (key) do update set value = to_jsonb(coalesce((app_settings.value #>> '{}')::bigint, 0) + 1),
      updated_at = now()`.execute(tx);
}

async function overrideOf(tx: Kysely<DB>, id: string): Promise<OverrideRow | undefined> {
  return (await tx
    .selectFrom('compliance_rule_overrides')
    .selectAll()
    .where('rule_id', '=', id)
    .executeTakeFirst()) as OverrideRow | undefined;
}

export type RuleChange = Partial<Record<keyof ComplianceRule, unknown>>;

/**
 * Sets a rule: the fields given change, the others keep the rule's current values (the override's, else the
 * file's). A new id needs every field. The result is checked whole, as the file's rules are. `enabled`, when given,
 * switches it on or off in the same transaction (a rule added switched off never applies, not even for a moment);
 * absent, the rule keeps its switch (a new rule is on).
 */
export async function setRule(
  db: Db,
  file: RuleFile,
  id: string,
  change: RuleChange,
  changedBy: string,
  enabled?: boolean,
): Promise<EffectiveRule> {
  ruleIdOf(id);
  if (change.id !== undefined && change.id !== id)
    throw new InputError(`id ${String(change.id)} is not the rule's id ${id}.`, { field: 'id' });
  return withTransaction(db, async (tx) => {
    await bumpVersion(tx);
    const row = await overrideOf(tx, id);
    const current = (row?.rule as ComplianceRule | null) ?? file.rules.find((rule) => rule.id === id);
    const next: Record<string, unknown> = { ...current, ...change, id };
    // `effective_until: null` clears the last day.
    if (next.effective_until === null) delete next.effective_until;
    const rule = checkRule(next);
    const disabled = enabled === undefined ? (row?.disabled ?? false) : !enabled;
    await tx
      .insertInto('compliance_rule_overrides')
      .values({ rule_id: id, rule: JSON.stringify(rule), disabled, changed_by: changedBy })
      .onConflict((conflict) =>
        conflict.column('rule_id').doUpdateSet({
          rule: JSON.stringify(rule),
          disabled,
          changed_by: changedBy,
          changed_at: sql`now()`,
        }),
      )
      .execute();
    return effectiveOne(tx, file, id);
  });
}

/** Switches a rule on or off; an override that only switched a file rule off is removed when it is on again. */
export async function switchRule(
  db: Db,
  file: RuleFile,
  id: string,
  enabled: boolean,
  changedBy: string,
): Promise<EffectiveRule> {
  ruleIdOf(id);
  return withTransaction(db, async (tx) => {
    await bumpVersion(tx);
    const row = await overrideOf(tx, id);
    const inFile = file.rules.some((rule) => rule.id === id);
    if (!row && !inFile) throw noSuchRule(id);
    if (enabled && row && row.rule === null)
      await tx.deleteFrom('compliance_rule_overrides').where('rule_id', '=', id).execute();
    else if (row)
      await tx
        .updateTable('compliance_rule_overrides')
        .set({ disabled: !enabled, changed_by: changedBy, changed_at: sql`now()` })
        .where('rule_id', '=', id)
        .execute();
    else if (!enabled)
      await tx
        .insertInto('compliance_rule_overrides')
        .values({ rule_id: id, rule: null, disabled: true, changed_by: changedBy })
        .execute();
    return effectiveOne(tx, file, id);
  });
}

/** Removes the override of a rule: a file rule is the file's again, an operator's rule is gone. */
export async function removeOverride(db: Db, file: RuleFile, id: string): Promise<EffectiveRule | undefined> {
  ruleIdOf(id);
  return withTransaction(db, async (tx) => {
    await bumpVersion(tx);
    const removed = await tx
      .deleteFrom('compliance_rule_overrides')
      .where('rule_id', '=', id)
      .returning('rule_id')
      .executeTakeFirst();
    if (!removed) throw new AppError('RECORD_NOT_FOUND', { detail: `No override of compliance rule ${id}.` });
    return file.rules.some((rule) => rule.id === id) ? effectiveOne(tx, file, id) : undefined;
  });
}

async function effectiveOne(tx: Kysely<DB>, file: RuleFile, id: string): Promise<EffectiveRule> {
  const found = (await listRules(tx, file)).find((effective) => effective.rule.id === id);
  if (!found) throw noSuchRule(id);
  return found;
}

/** One rule of the effective set by id, or RECORD_NOT_FOUND. */
export async function findRule(db: Kysely<DB>, file: RuleFile, id: string): Promise<EffectiveRule> {
  ruleIdOf(id);
  return effectiveOne(db, file, id);
}

/** A rule as `ewa compliance --json` and /admin/compliance/rules show it: its fields, origin, switch, who and when. */
export function ruleJson(effective: EffectiveRule) {
  return {
    ...effective.rule,
    origin: effective.origin,
    enabled: effective.enabled,
    changed_by: effective.changedBy,
    changed_at: effective.changedAt?.toISOString() ?? null,
  };
}
