import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../errors/input-error.ts';
import { type ComplianceRule, checkRule } from './compliance-rule.ts';

/** The rule file of this repository: reviewed with the code, changed by a release (the operator's changes are overrides). */
export const STATE_RULES_PATH = join(import.meta.dirname, 'state-rules.json');

export interface RuleFile {
  /** The file's own version, shown by `ewa compliance list` and /admin/compliance/rules. */
  version: string;
  rules: readonly ComplianceRule[];
}

/** A rule file that cannot be used: the server does not start on it, and the message says where it is wrong. */
export class ComplianceFileError extends Error {
  override name = 'ComplianceFileError';
}

/** Parses and checks a rule file's text; every rule must be valid and every id unique. */
export function parseRuleFile(text: string, path = STATE_RULES_PATH): RuleFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ComplianceFileError(`${path} is not JSON: ${(error as Error).message}`);
  }
  const { version, rules } = (parsed ?? {}) as { version?: unknown; rules?: unknown };
  if (typeof version !== 'string' || version.length === 0)
    throw new ComplianceFileError(`${path}: "version" must be a non-empty string.`);
  if (!Array.isArray(rules)) throw new ComplianceFileError(`${path}: "rules" must be a list.`);
  const ids = new Set<string>();
  const checked = rules.map((rule, index) => {
    const where = `${path}: rule ${index + 1}${typeof rule?.id === 'string' ? ` (${rule.id})` : ''}`;
    try {
      const valid = checkRule(rule);
      if (ids.has(valid.id)) throw new InputError(`id ${valid.id} is used by an earlier rule.`);
      ids.add(valid.id);
      return valid;
    } catch (error) {
      if (error instanceof InputError) throw new ComplianceFileError(`${where}: ${error.message}`);
      throw error;
    }
  });
  return { version, rules: checked };
}

let loaded: RuleFile | undefined;

/** The repository's rule file, read and checked once per process (at start-up: a broken file stops it). */
export function stateRules(): RuleFile {
  loaded ??= parseRuleFile(readFileSync(STATE_RULES_PATH, 'utf8'));
  return loaded;
}
