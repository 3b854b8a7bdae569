import { isCalendarDay as isDayOnCalendar } from '../domain/date-text.ts';
import { isUsState } from '../domain/us-states.ts';
import { InputError } from '../errors/input-error.ts';

/**
 * One rule of a state's law on earned-wage access, as data: the rule file (state-rules.json) and the operator's
 * overrides (rule-store.ts) both hold rules of this shape, and both go through `checkRule`, so an override can be
 * nothing the file could not be. Money is integer minor units, like every amount of this server.
 *
 * A kind still to come: TIP_SCREEN_ZERO_OPTION (NV, WI). It is not accepted until something enforces it.
 */
export const RULE_KINDS = [
  'FEE_CAP_PER_ADVANCE',
  'FEE_CAP_PER_MONTH',
  'FREE_OPTION_REQUIRED',
  'AMOUNT_LIMIT_PER_PERIOD',
  'FEE_BEARING_ADVANCES_PER_PERIOD',
  'NO_SERVICE',
  'DISCLOSURE_BEFORE_FIRST_TRANSFER',
  'DISCLOSURE_AT_EACH_REQUEST',
] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

/** A tier of a per-advance fee cap: advances up to `up_to_amount_minor` (the last tier: any larger) pay at most `max_fee_minor`. */
export interface FeeTier {
  up_to_amount_minor?: number;
  max_fee_minor: number;
}

export interface RuleParams {
  FEE_CAP_PER_ADVANCE: { tiers: FeeTier[] };
  FEE_CAP_PER_MONTH: { max_fees_minor: number };
  FREE_OPTION_REQUIRED: Record<string, never>;
  /** The advances of one pay period add up to less than this. */
  AMOUNT_LIMIT_PER_PERIOD: { less_than_minor: number };
  FEE_BEARING_ADVANCES_PER_PERIOD: { max_advances: number };
  NO_SERVICE: { reason: string };
  /** The current disclosure document (disclosures/) must be accepted before an advance. */
  DISCLOSURE_BEFORE_FIRST_TRANSFER: Record<string, never>;
  /** Each advance must carry the person's acknowledgement of its own terms (meta.disclosure_acknowledged). */
  DISCLOSURE_AT_EACH_REQUEST: Record<string, never>;
}

interface RuleOf<K extends RuleKind> {
  id: string;
  state: string;
  kind: K;
  params: RuleParams[K];
  /** First calendar day it applies (YYYY-MM-DD), in the employer's time zone. */
  effective_from: string;
  /** Last calendar day it applies, included; absent: no end. */
  effective_until?: string;
  /** The statute or regulation, for messages and the records. */
  source: string;
}

export type ComplianceRule = { [K in RuleKind]: RuleOf<K> }[RuleKind];
export type RuleOfKind<K extends RuleKind> = RuleOf<K>;

export const RULE_ID_PATTERN = /^[A-Z0-9][A-Z0-9_.-]{0,63}$/;
const MONEY_MAX = 100_000_000_000;
const SOURCE_LENGTH_MAX = 300;
const RULE_FIELDS = new Set(['id', 'state', 'kind', 'params', 'effective_from', 'effective_until', 'source']);

/** A day on the calendar from 2000 to 2100: the years a rule of today's statutes can be about. */
export function isCalendarDay(value: unknown): value is string {
  return (
    typeof value === 'string' && isDayOnCalendar(value) && value >= '2000-01-01' && value <= '2100-12-31'
  );
}

function shown(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    // Nested too deep to print (a request may send anything): what it is will do.
    text = Array.isArray(value) ? 'a list' : typeof value;
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * A rule as given (parsed JSON), checked field by field; returns it in its stored form or throws an InputError
 * naming the field (`params.tiers`) as the file, the CLI and the admin API name it.
 */
export function checkRule(input: unknown): ComplianceRule {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new InputError(`a rule must be a JSON object (got ${shown(input)}).`);
  const given = input as Record<string, unknown>;
  for (const key of Object.keys(given))
    if (!RULE_FIELDS.has(key)) throw new InputError(`${key} is not a field of a rule.`, { field: key });
  const fail = (field: string, what: string, value: unknown): never => {
    throw new InputError(`${field} must be ${what} (got ${shown(value)}).`, { field });
  };
  const { id, state, kind, params, effective_from: from, effective_until: until, source } = given;
  if (typeof id !== 'string' || !RULE_ID_PATTERN.test(id))
    fail(
      'id',
      'capitals, digits, dots, dashes or underscores, 1 to 64 of them, such as CT-FEE-CAP-ADVANCE',
      id,
    );
  if (typeof state !== 'string' || !isUsState(state))
    fail('state', 'the two-letter code of a US state or DC in capitals, such as CT', state);
  if (typeof kind !== 'string' || !(RULE_KINDS as readonly string[]).includes(kind))
    fail('kind', `one of ${RULE_KINDS.join(', ')}`, kind);
  if (!isCalendarDay(from)) fail('effective_from', 'a calendar day YYYY-MM-DD from 2000 to 2100', from);
  if (until !== undefined && until !== null) {
    if (!isCalendarDay(until)) fail('effective_until', 'a calendar day YYYY-MM-DD from 2000 to 2100', until);
    if ((until as string) < (from as string))
      fail('effective_until', `on or after effective_from (${from})`, until);
  }
  if (typeof source !== 'string' || source.trim().length === 0 || source.length > SOURCE_LENGTH_MAX)
    fail('source', `the statute or regulation, 1 to ${SOURCE_LENGTH_MAX} characters`, source);
  const rule = {
    id,
    state,
    kind,
    params: checkParams(kind as RuleKind, params ?? {}),
    effective_from: from,
    ...(until === undefined || until === null ? {} : { effective_until: until }),
    source: (source as string).trim(),
  };
  return rule as ComplianceRule;
}

function checkParams(kind: RuleKind, params: unknown): ComplianceRule['params'] {
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    throw new InputError(`params must be a JSON object (got ${shown(params)}).`, { field: 'params' });
  const given = params as Record<string, unknown>;
  const only = (...names: string[]) => {
    for (const key of Object.keys(given))
      if (!names.includes(key))
        throw new InputError(
          `params.${key} is not a parameter of ${kind}${names.length ? ` (its parameters: ${names.join(', ')})` : ' (it has none)'}.`,
          { field: `params.${key}` },
        );
  };
  const money = (field: string, value: unknown, min = 0): number => {
    if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > MONEY_MAX)
      throw new InputError(
        `params.${field} must be a whole number of minor units from ${min} to ${MONEY_MAX} (got ${shown(value)}).`,
        { field: `params.${field}` },
      );
    return value as number;
  };
  switch (kind) {
    case 'FEE_CAP_PER_ADVANCE': {
      only('tiers');
      const tiers = given.tiers;
      if (!Array.isArray(tiers) || tiers.length === 0 || tiers.length > 10)
        throw new InputError(
          `params.tiers must be a list of 1 to 10 tiers such as [{"up_to_amount_minor": 7500, "max_fee_minor": 500}, {"max_fee_minor": 750}] (got ${shown(tiers)}).`,
          { field: 'params.tiers' },
        );
      let below = 0;
      return {
        tiers: tiers.map((tier, index) => {
          const at = `tiers[${index}]`;
          if (typeof tier !== 'object' || tier === null || Array.isArray(tier))
            throw new InputError(`params.${at} must be an object (got ${shown(tier)}).`, {
              field: `params.${at}`,
            });
          const {
            up_to_amount_minor: upTo,
            max_fee_minor: maxFee,
            ...rest
          } = tier as Record<string, unknown>;
          const extra = Object.keys(rest)[0];
          if (extra !== undefined)
            throw new InputError(`params.${at}.${extra} is not a field of a tier.`, {
              field: `params.${at}.${extra}`,
            });
          const last = index === tiers.length - 1;
          if (last && upTo !== undefined)
            throw new InputError(
              `params.${at} is the last tier: it has no up_to_amount_minor (any larger advance).`,
              {
                field: `params.${at}.up_to_amount_minor`,
              },
            );
          const checked: FeeTier = { max_fee_minor: money(`${at}.max_fee_minor`, maxFee) };
          if (!last) {
            checked.up_to_amount_minor = money(`${at}.up_to_amount_minor`, upTo, below + 1);
            below = checked.up_to_amount_minor;
          }
          return checked.up_to_amount_minor === undefined
            ? { max_fee_minor: checked.max_fee_minor }
            : { up_to_amount_minor: checked.up_to_amount_minor, max_fee_minor: checked.max_fee_minor };
        }),
      };
    }
    case 'FEE_CAP_PER_MONTH':
      only('max_fees_minor');
      return { max_fees_minor: money('max_fees_minor', given.max_fees_minor) };
    case 'FREE_OPTION_REQUIRED':
    case 'DISCLOSURE_BEFORE_FIRST_TRANSFER':
    case 'DISCLOSURE_AT_EACH_REQUEST':
      only();
      return {};
    case 'AMOUNT_LIMIT_PER_PERIOD':
      only('less_than_minor');
      return { less_than_minor: money('less_than_minor', given.less_than_minor, 1) };
    case 'FEE_BEARING_ADVANCES_PER_PERIOD': {
      only('max_advances');
      const max = given.max_advances;
      if (!Number.isSafeInteger(max) || (max as number) < 0 || (max as number) > 1000)
        throw new InputError(
          `params.max_advances must be a whole number from 0 to 1000 (got ${shown(max)}).`,
          {
            field: 'params.max_advances',
          },
        );
      return { max_advances: max as number };
    }
    case 'NO_SERVICE': {
      only('reason');
      const reason = given.reason;
      if (typeof reason !== 'string' || reason.trim().length === 0 || reason.length > 300)
        throw new InputError(
          `params.reason must be the reason, 1 to 300 characters (got ${shown(reason)}).`,
          {
            field: 'params.reason',
          },
        );
      return { reason: reason.trim() };
    }
  }
}

/** The rule applies on the calendar day `day`: from its first day to its last, both included. */
export function inEffectOn(rule: ComplianceRule, day: string): boolean {
  return rule.effective_from <= day && (rule.effective_until === undefined || day <= rule.effective_until);
}
