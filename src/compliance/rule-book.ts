import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { ComplianceRule } from './compliance-rule.ts';
import { mergeRules, readOverrides } from './rule-store.ts';
import { type RuleFile, stateRules } from './state-rules.ts';

/**
 * The rules in force in this process: the file's with the operator's overrides, kept until the database's
 * `compliance_rules_version` moves. An advance reads that counter in its batch of reads and hands it here, so an
 * override committed by any process applies from the next advance on, at the cost of one small read when it moved.
 */
export class RuleBook {
  readonly file: RuleFile;
  #cached: { version: number; rules: readonly ComplianceRule[] } | undefined;

  constructor(file: RuleFile = stateRules()) {
    this.file = file;
  }

  /** The enabled rules as of `version` (the counter the caller read); reloaded with `runner` when it moved. */
  async at(runner: Kysely<DB>, version: number): Promise<readonly ComplianceRule[]> {
    if (this.#cached?.version === version) return this.#cached.rules;
    const read = await readOverrides(runner);
    const rules = mergeRules(this.file, read.overrides)
      .filter((effective) => effective.enabled)
      .map((effective) => effective.rule);
    // Labelled with the version read together with the rows: never newer than what they hold.
    this.#cached = { version: read.version, rules };
    return rules;
  }
}
