import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { ComplianceRule, RuleKind } from './compliance-rule.ts';
import { mergeRules, readOverrides } from './rule-store.ts';
import { type RuleFile, stateRules } from './state-rules.ts';

/**
 * The rules in force in this process: the file's with the operator's overrides, kept until the database's
 * `compliance_rules_version` moves. An advance reads that counter in its batch of reads and hands it here, so an
 * override committed by any process applies from the next advance on, at the cost of one small read when it moved.
 */
/** The kinds of rule whose check needs counts of the person's past advances (advance-store.ts reads them). */
export const COUNTING_KINDS: readonly RuleKind[] = ['FEE_CAP_PER_MONTH', 'FEE_BEARING_ADVANCES_PER_PERIOD'];

export class RuleBook {
  readonly file: RuleFile;
  #cached: { version: number; rules: readonly ComplianceRule[] } | undefined;

  constructor(file: RuleFile = stateRules()) {
    this.file = file;
  }

  /**
   * The states with a rule that counts the month's fees or a pay period's advances with a fee, by the rules as
   * last read (and that version); undefined before any read. An advance's reads count those only for people of
   * these states; decide() reads again when the rules it finds are newer and count for the person's state.
   */
  countingStates(): { version: number; states: string[] } | undefined {
    if (!this.#cached) return undefined;
    const states = this.#cached.rules
      .filter((rule) => COUNTING_KINDS.includes(rule.kind))
      .map((rule) => rule.state);
    return { version: this.#cached.version, states: [...new Set(states)] };
  }

  /**
   * The states with a DISCLOSURE_BEFORE_FIRST_TRANSFER rule, by the rules as last read; undefined before any read.
   * An advance reads the disclosure and its acceptance only for people of these states (see countingStates).
   */
  disclosureStates(): string[] | undefined {
    if (!this.#cached) return undefined;
    const states = this.#cached.rules
      .filter((rule) => rule.kind === 'DISCLOSURE_BEFORE_FIRST_TRANSFER')
      .map((rule) => rule.state);
    return [...new Set(states)];
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
