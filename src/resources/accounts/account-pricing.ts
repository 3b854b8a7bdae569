import type { Kysely } from 'kysely';
import { jurisdictionOf } from '../../compliance/jurisdiction.ts';
import { RuleBook } from '../../compliance/rule-book.ts';
import type { DB } from '../../db/schema.ts';
import { feesWithinReach, stateAddsFreeOption } from '../../money/advances/advance-rules.ts';
import type { FeeSchedule } from './capabilities.ts';
import type { PersonFeeSchedule } from './store.ts';

/** What prices an account's transfer destinations as an advance would be: the money's clock and the rails. */
export interface AccountPricing {
  /** The money's clock (the sandbox's, in UAT): the day that decides which state rules are in effect. */
  now?: () => Date;
  /** The kinds of account the configured rails pay. */
  payable?: readonly string[] | undefined;
  /** The kinds they pay within thirty minutes; every kind they pay when absent. */
  instant?: readonly string[] | undefined;
}

/**
 * The fees an account shows are those an advance would charge (feeFor): the employer's, with the free
 * next-business-day option a state's rule adds where the employer offers no free option. The accounts routes price
 * at the money's clock; a webhook event about an account is priced at the instant it happened, with the person's
 * state and the employer's time zone its snapshot took then, so it shows what `GET` showed.
 */
export class AccountPricer {
  readonly #rules = new RuleBook();
  readonly #pricing: AccountPricing;

  constructor(pricing: AccountPricing = {}) {
    this.#pricing = pricing;
  }

  /** The money's clock now. */
  now(): Date {
    return this.#pricing.now?.() ?? new Date();
  }

  async priced(db: Kysely<DB>, schedule: PersonFeeSchedule, at: Date = this.now()): Promise<FeeSchedule> {
    const { jurisdiction: where, ...employer } = schedule;
    // What no configured rail pays is not offered, whatever the employer's schedule says.
    const policyFees = feesWithinReach(
      {
        feeCardInstantMinor: employer.fee_card_instant_minor,
        feeCardNextDayMinor: employer.fee_card_next_day_minor,
        feeBankInstantMinor: employer.fee_bank_instant_minor,
        feeBankNextDayMinor: employer.fee_bank_next_day_minor,
      },
      this.#pricing,
    );
    const fees: FeeSchedule = {
      currency: employer.currency,
      fee_card_instant_minor: policyFees.feeCardInstantMinor,
      fee_card_next_day_minor: policyFees.feeCardNextDayMinor,
      fee_bank_instant_minor: policyFees.feeBankInstantMinor,
      fee_bank_next_day_minor: policyFees.feeBankNextDayMinor,
    };
    if (!where) return fees;
    const rules = await this.#rules.at(db, where.rulesVersion);
    const jurisdiction = jurisdictionOf(rules, where.state, at, where.timeZone);
    return stateAddsFreeOption(policyFees, jurisdiction, this.#pricing.payable)
      ? { ...fees, fee_bank_next_day_minor: 0 }
      : fees;
  }
}
