import { localDateOf } from '../domain/calendar.ts';
import { stateName } from '../domain/us-states.ts';
import { type ComplianceRule, inEffectOn, type RuleKind, type RuleOfKind } from './compliance-rule.ts';

/**
 * Which rules apply to one person today: those of their state of residence in effect on the calendar day of the
 * advance's instant in the employer's time zone (the day its pay calendar and paychecks are counted in).
 */
export interface Jurisdiction {
  state: string;
  /** "Connecticut", for messages. */
  stateName: string;
  day: string;
  rules: readonly ComplianceRule[];
}

export function jurisdictionOf(
  rules: readonly ComplianceRule[],
  state: string,
  instant: Date,
  timeZone: string,
): Jurisdiction {
  const day = localDateOf(instant, timeZone);
  return {
    state,
    stateName: stateName(state),
    day,
    rules: rules.filter((rule) => rule.state === state && inEffectOn(rule, day)),
  };
}

/** The rules of one kind that apply (an operator may add a second one: each must hold). */
export function rulesOfKind<K extends RuleKind>(
  jurisdiction: Jurisdiction | undefined,
  kind: K,
): RuleOfKind<K>[] {
  return (jurisdiction?.rules.filter((rule) => rule.kind === kind) ?? []) as RuleOfKind<K>[];
}

/** "(CT-FEE-CAP-MONTH, Conn. Gen. Stat. 36a-555 et seq.)": which rule refused, for the refusal's detail. */
export function citation(rule: ComplianceRule): string {
  return `(${rule.id}, ${rule.source})`;
}
