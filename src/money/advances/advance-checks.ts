import { citation, type Jurisdiction, rulesOfKind } from '../../compliance/jurisdiction.ts';
import { AppError } from '../../errors/app-error.ts';
import type { ErrorCode } from '../../errors/catalog.ts';
import type { JobTerms } from '../earnings/job-terms.ts';
import { fundFifo, type Schedule } from './advance-rules.ts';
import type { DisclosureRead, MoneyState } from './advance-store.ts';
import type { PersonAccountRow, PersonStanding } from './transfer.ts';

/**
 * The checks of an advance, in the documented order: the first that refuses answers. This table is the one place the
 * order is written; the sandbox page of the docs and the route's description are generated from it
 * (`describeAdvanceChecks`), and a test holds docs/integrators/sandbox.md to it. Each check is a small pure function of what the advance read under its locks.
 */

/** What an advance's checks look at: the request, and what was read for it under the person's lock. */
export interface AdvanceFacts {
  request: {
    originId: string;
    /** The `person` relationship, when sent. */
    personId: string | undefined;
    destinationId: string | undefined;
    amountMinor: number;
    currency: string;
    schedule: Schedule;
    preview: boolean;
    /** meta.disclosure_acknowledged of the request. */
    disclosureAcknowledged?: boolean;
  };
  /** The signed-in person. */
  personId: string;
  standing: PersonStanding;
  /** The origin, when it is an account of this person. */
  origin: { id: string; account_type: string } | undefined;
  /** The origin's job and its employer's policy, when the origin is an earnings balance. */
  terms: JobTerms | undefined;
  /** The destination sent, or the job's default depository; when it is a live account of this person. */
  destination: PersonAccountRow | undefined;
  /**
   * The compliance rules of the person's state in effect on the advance's day; undefined when the person has no
   * state (MISSING_STATE_OF_RESIDENCE refuses first).
   */
  jurisdiction: Jurisdiction | undefined;
  /**
   * The fee for the destination's kind and the schedule (the employer's, or 0 where the state requires a free option
   * the employer does not offer: feeFor); null when the pair is not offered.
   */
  fee: number | null;
  /** A rail of this server pays the destination's kind of account. */
  railPays: boolean;
  /** It pays it on the schedule asked: WITHIN_THIRTY_MINUTES needs a rail that pays that kind at once. */
  railPaysSchedule: boolean;
  money: MoneyState;
  /**
   * The current disclosure document of the person's state and their acceptance of it; read (under the person's
   * lock) when a DISCLOSURE_BEFORE_FIRST_TRANSFER rule applies, else possibly undefined.
   */
  disclosure: DisclosureRead | undefined;
  /** The transfer's id: the client's, or a new one. */
  transferId: string;
  /** The duplicate check's window (0: off), for its message. */
  duplicateWindowMs: number;
}

export interface AdvanceCheck {
  /** A short name for logs and tests. */
  name: string;
  /** The step of the documented order it belongs to (checks of one step run in the table's order too). */
  step: AdvanceStep;
  code: ErrorCode;
  /** When it refuses, for the docs; empty when the code says it all. */
  when: string;
  /** The refusal, or undefined when the advance passes. */
  refusal(facts: AdvanceFacts): AppError | undefined;
}

export type AdvanceStep =
  | 'links'
  | 'eligibility'
  | 'origin and destination'
  | 'amounts'
  | 'limits'
  | 'duplicates';

function refuse(code: ErrorCode, detail: string, pointer?: string): AppError {
  return new AppError(code, { detail, ...(pointer ? { source: { pointer } } : {}) });
}

const ORIGIN = '/data/relationships/origin';
const DESTINATION = '/data/relationships/destination';
const AMOUNT = '/data/attributes/amount';

/** The policy, where a check needs it: only checks after INELIGIBLE_ORIGIN may rely on it being there. */
function policyOf(facts: AdvanceFacts) {
  if (!facts.terms) throw new Error('an advance check that needs the policy ran before INELIGIBLE_ORIGIN');
  return facts.terms.policy;
}

/** The paychecks that would fund the advance and how much from each; empty when they cannot cover it. */
function sharesOf(facts: AdvanceFacts) {
  const shares = fundFifo(facts.money.fundable, facts.request.amountMinor) ?? [];
  const paychecks = new Map(facts.money.fundable.map((paycheck) => [paycheck.id, paycheck]));
  return shares.flatMap((share) => {
    const paycheck = paychecks.get(share.paycheckId);
    return paycheck ? [{ ...share, paycheck }] : [];
  });
}

function feeOf(facts: AdvanceFacts): number {
  if (facts.fee === null)
    throw new Error('an advance check that needs the fee ran before INVALID_TRANSFER_SCHEDULE');
  return facts.fee;
}

export const ADVANCE_CHECKS: readonly AdvanceCheck[] = [
  {
    name: 'origin is the caller’s',
    step: 'links',
    code: 'INVALID_RESOURCE_LINK',
    when: 'the origin is not an account of the caller',
    refusal: (facts) =>
      facts.origin
        ? undefined
        : refuse(
            'INVALID_RESOURCE_LINK',
            `origin ${facts.request.originId} is not an account of this person.`,
            ORIGIN,
          ),
  },
  {
    name: 'person is the caller',
    step: 'links',
    code: 'INVALID_RESOURCE_LINK',
    when: '`person`, if sent, is not the caller',
    refusal: ({ request, personId }) =>
      request.personId === undefined || request.personId.toLowerCase() === personId
        ? undefined
        : refuse(
            'INVALID_RESOURCE_LINK',
            `person ${request.personId} is not the signed-in person.`,
            '/data/relationships/person',
          ),
  },
  {
    name: 'person allowed',
    step: 'eligibility',
    code: 'TRANSFERS_DISABLED',
    when: 'the person has a `disallow_reason`',
    refusal: ({ standing }) =>
      standing.disallow_reason === null
        ? undefined
        : refuse(
            'TRANSFERS_DISABLED',
            `Transfers are disabled for this person (${standing.disallow_reason}).`,
          ),
  },
  {
    name: 'employer allows',
    step: 'eligibility',
    code: 'TRANSFERS_DISABLED',
    when: 'the employer turned transfers off',
    refusal: ({ terms }) =>
      !terms || terms.policy.transfersEnabled
        ? undefined
        : refuse('TRANSFERS_DISABLED', 'The employer has turned transfers off.'),
  },
  {
    name: 'overpayment resolved',
    step: 'eligibility',
    code: 'OVERPAYMENT_RESOLUTION_REQUIRED',
    when: 'the person has an overpayment (a paycheck closed with advances above its net pay) and no way to recover it is chosen yet (`GET /rest/people/{id}/overpayments`)',
    refusal: ({ standing, personId }) => {
      const overpayment = standing.overpayment;
      if (overpayment?.status !== 'RESOLUTION_REQUIRED') return undefined;
      return refuse(
        'OVERPAYMENT_RESOLUTION_REQUIRED',
        `Overpayment ${overpayment.id} (${overpayment.remainingMinor} ${overpayment.currency} advanced above a paycheck's net pay) ` +
          `needs a resolution: choose how later paychecks of the job repay it with POST /rest/people/${personId}/overpayment_resolutions ` +
          '(NEXT_PAYCHECK or INSTALLMENTS); nothing is ever taken from a bank account or card.',
      );
    },
  },
  {
    name: 'no overpayment being recovered',
    step: 'eligibility',
    code: 'OVERPAYMENT_RESOLVING',
    when: 'an overpayment of the person is being recovered from later paychecks; transfers resume once it is recovered (or written off)',
    refusal: ({ standing, personId }) => {
      const overpayment = standing.overpayment;
      if (overpayment?.status !== 'RECOVERING') return undefined;
      return refuse(
        'OVERPAYMENT_RESOLVING',
        `Overpayment ${overpayment.id} is being recovered from the next paychecks of its job (${overpayment.remainingMinor} ` +
          `${overpayment.currency} left); transfers resume once it is recovered. See GET /rest/people/${personId}/overpayments.`,
      );
    },
  },
  {
    name: 'state of residence known',
    step: 'eligibility',
    code: 'MISSING_STATE_OF_RESIDENCE',
    when: '',
    refusal: ({ standing }) =>
      standing.state_of_residence !== null
        ? undefined
        : refuse(
            'MISSING_STATE_OF_RESIDENCE',
            'Set state_of_residence with PATCH /rest/people/{id} before transferring.',
          ),
  },
  {
    name: 'state served',
    step: 'eligibility',
    code: 'TRANSFERS_DISABLED',
    when: "a `NO_SERVICE` compliance rule of the person's state: the operator offers no service there",
    refusal: ({ jurisdiction }) => {
      const rule = rulesOfKind(jurisdiction, 'NO_SERVICE')[0];
      return rule && jurisdiction
        ? refuse(
            'TRANSFERS_DISABLED',
            `Transfers are not offered to residents of ${jurisdiction.stateName}: ${rule.params.reason} ${citation(rule)}.`,
          )
        : undefined;
    },
  },
  {
    name: 'disclosure accepted',
    step: 'eligibility',
    code: 'DISCLOSURE_REQUIRED',
    when: "a `DISCLOSURE_BEFORE_FIRST_TRANSFER` rule of the person's state, and the current version of its disclosure not accepted (`GET /rest/people/{id}/disclosures`)",
    refusal: ({ jurisdiction, disclosure, personId }) => {
      const rule = rulesOfKind(jurisdiction, 'DISCLOSURE_BEFORE_FIRST_TRANSFER')[0];
      if (!rule || !jurisdiction || disclosure?.acceptedAt) return undefined;
      const where = `GET /rest/people/${personId}/disclosures`;
      return refuse(
        'DISCLOSURE_REQUIRED',
        disclosure
          ? `${jurisdiction.stateName} requires the disclosure "${disclosure.title}" (version ${disclosure.version}, id ${disclosure.id}) to be accepted before an advance: show it and accept it (${where}) ${citation(rule)}.`
          : `${jurisdiction.stateName} requires a disclosure before an advance and none is published yet (${where}) ${citation(rule)}.`,
      );
    },
  },
  {
    name: 'this request acknowledged',
    step: 'eligibility',
    code: 'DISCLOSURE_REQUIRED',
    when: "a `DISCLOSURE_AT_EACH_REQUEST` rule of the person's state (Utah), and a transfer (not a preview) without `data.meta.disclosure_acknowledged: true`",
    refusal: ({ jurisdiction, request }) => {
      const rule = rulesOfKind(jurisdiction, 'DISCLOSURE_AT_EACH_REQUEST')[0];
      if (!rule || !jurisdiction || request.preview || request.disclosureAcknowledged === true)
        return undefined;
      return refuse(
        'DISCLOSURE_REQUIRED',
        `${jurisdiction.stateName} requires the person to acknowledge the terms of each advance: show the preview's terms (preview: true) and send this request with data.meta.disclosure_acknowledged: true ${citation(rule)}.`,
        '/data/meta/disclosure_acknowledged',
      );
    },
  },
  {
    name: 'direct deposit set up',
    step: 'eligibility',
    code: 'INVALID_DIRECT_DEPOSIT_STATUS',
    when: "the job's direct deposit is not `SETUP_COMPLETE`",
    refusal: ({ terms }) =>
      !terms || terms.directDepositStatus === 'SETUP_COMPLETE'
        ? undefined
        : refuse(
            'INVALID_DIRECT_DEPOSIT_STATUS',
            `The job's direct_deposit_status is ${terms.directDepositStatus}; it must be SETUP_COMPLETE.`,
          ),
  },
  {
    name: 'origin is an active earnings balance',
    step: 'origin and destination',
    code: 'INELIGIBLE_ORIGIN',
    when: 'the origin is not an earnings balance, or its job is not active',
    refusal: ({ terms, origin }) =>
      terms?.activationStatus === 'ACTIVATED'
        ? undefined
        : refuse(
            'INELIGIBLE_ORIGIN',
            origin?.account_type === 'EARNINGS_BALANCE'
              ? `The job of earnings balance ${origin.id} is not active.`
              : `Advances come from an EARNINGS_BALANCE account; ${origin?.id} is ${origin?.account_type}.`,
            ORIGIN,
          ),
  },
  {
    name: 'default depository exists',
    step: 'origin and destination',
    code: 'MISSING_DEFAULT_DEPOSITORY_ACCOUNT',
    when: 'no destination was sent and the job has no default depository',
    refusal: ({ request, destination }) =>
      request.destinationId !== undefined || destination
        ? undefined
        : refuse(
            'MISSING_DEFAULT_DEPOSITORY_ACCOUNT',
            'No destination was sent and the job has no default depository account.',
            DESTINATION,
          ),
  },
  {
    name: 'destination is a bank account or card of the caller',
    step: 'origin and destination',
    code: 'INVALID_DESTINATION',
    when: "the destination is not the person's bank account or card",
    refusal: ({ request, destination }) =>
      request.destinationId === undefined ||
      destination?.account_type === 'DEPOSITORY' ||
      destination?.account_type === 'CARD'
        ? undefined
        : refuse(
            'INVALID_DESTINATION',
            `destination ${request.destinationId} is not a bank account or card of this person.`,
            DESTINATION,
          ),
  },
  {
    name: 'a rail pays the destination',
    step: 'origin and destination',
    code: 'INVALID_TRANSFER_SCHEDULE',
    when: 'no payment rail of this server pays that kind of account: cards, in production, until a card rail exists',
    refusal: ({ railPays, destination }) =>
      railPays
        ? undefined
        : refuse(
            'INVALID_TRANSFER_SCHEDULE',
            `This server pays no ${destination?.account_type} accounts: no payment rail for them is configured.`,
            DESTINATION,
          ),
  },
  {
    name: 'a rail pays the schedule',
    step: 'origin and destination',
    code: 'INVALID_TRANSFER_SCHEDULE',
    when: 'no payment rail of this server pays that kind of account within thirty minutes: bank accounts on the ACH rail',
    refusal: ({ railPaysSchedule, destination }) =>
      railPaysSchedule
        ? undefined
        : refuse(
            'INVALID_TRANSFER_SCHEDULE',
            `This server pays ${destination?.account_type} accounts NEXT_BUSINESS_DAY only: its rail for them takes a business day or more.`,
            '/data/attributes/schedule',
          ),
  },
  {
    name: 'schedule offered',
    step: 'origin and destination',
    code: 'INVALID_TRANSFER_SCHEDULE',
    when: 'the employer offers no such schedule to that kind of account',
    refusal: ({ fee, request, destination }) =>
      fee !== null
        ? undefined
        : refuse(
            'INVALID_TRANSFER_SCHEDULE',
            `${request.schedule} is not offered to ${destination?.account_type} accounts by this employer.`,
            '/data/attributes/schedule',
          ),
  },
  {
    name: 'currency of the balance',
    step: 'origin and destination',
    code: 'INVALID_PARAMETERS',
    when: "`currency` is not the earnings balance's",
    refusal: (facts) => {
      const { currency } = policyOf(facts);
      return facts.request.currency === currency
        ? undefined
        : refuse(
            'INVALID_PARAMETERS',
            `currency must be ${currency}, the currency of the earnings balance.`,
            '/data/attributes/currency',
          );
    },
  },
  {
    name: 'minimum amount',
    step: 'amounts',
    code: 'MINIMUM_AMOUNT_SUBCEEDED',
    when: 'below the minimum, or not above the fee',
    refusal: (facts) => {
      const { minimumTransferMinor } = policyOf(facts);
      const fee = feeOf(facts);
      const amount = facts.request.amountMinor;
      return amount >= minimumTransferMinor && amount > fee
        ? undefined
        : refuse(
            'MINIMUM_AMOUNT_SUBCEEDED',
            `amount must be at least ${Math.max(minimumTransferMinor, fee + 1)}.`,
            AMOUNT,
          );
    },
  },
  {
    name: 'maximum amount',
    step: 'amounts',
    code: 'MAXIMUM_AMOUNT_EXCEEDED',
    when: '',
    refusal: (facts) => {
      const { maximumTransferMinor } = policyOf(facts);
      return facts.request.amountMinor <= maximumTransferMinor
        ? undefined
        : refuse('MAXIMUM_AMOUNT_EXCEEDED', `amount must be at most ${maximumTransferMinor}.`, AMOUNT);
    },
  },
  {
    name: 'maximum fee',
    step: 'amounts',
    code: 'MAXIMUM_FEE_EXCEEDED',
    when: '',
    refusal: (facts) => {
      const { maximumFeeMinor } = policyOf(facts);
      const fee = feeOf(facts);
      return fee <= maximumFeeMinor
        ? undefined
        : refuse(
            'MAXIMUM_FEE_EXCEEDED',
            `The fee ${fee} is above the largest fee allowed, ${maximumFeeMinor}.`,
          );
    },
  },
  {
    name: 'state fee cap per advance',
    step: 'amounts',
    code: 'MAXIMUM_FEE_EXCEEDED',
    when: "the fee is above the cap of the person's state for an advance of that amount, a `FEE_CAP_PER_ADVANCE` rule",
    refusal: (facts) => {
      const fee = feeOf(facts);
      const amount = facts.request.amountMinor;
      for (const rule of rulesOfKind(facts.jurisdiction, 'FEE_CAP_PER_ADVANCE')) {
        const tier = rule.params.tiers.find(
          (candidate) => candidate.up_to_amount_minor === undefined || amount <= candidate.up_to_amount_minor,
        );
        if (tier && fee > tier.max_fee_minor)
          return refuse(
            'MAXIMUM_FEE_EXCEEDED',
            `${facts.jurisdiction?.stateName} allows a fee of at most ${tier.max_fee_minor} on an advance of ` +
              `${tier.up_to_amount_minor === undefined ? 'this amount' : `up to ${tier.up_to_amount_minor}`}; this fee is ${fee} ${citation(rule)}.`,
          );
      }
      return undefined;
    },
  },
  {
    name: 'state fee cap per month',
    step: 'amounts',
    code: 'MAXIMUM_FEE_EXCEEDED',
    when: "the fee and the person's other fees of the calendar month add up to more than their state allows, a `FEE_CAP_PER_MONTH` rule",
    refusal: (facts) => {
      const fee = feeOf(facts);
      const { monthFeesMinor } = facts.money;
      for (const rule of rulesOfKind(facts.jurisdiction, 'FEE_CAP_PER_MONTH')) {
        if (fee > 0 && monthFeesMinor + fee > rule.params.max_fees_minor)
          return refuse(
            'MAXIMUM_FEE_EXCEEDED',
            `${facts.jurisdiction?.stateName} allows at most ${rule.params.max_fees_minor} of fees in a calendar month; ` +
              `${monthFeesMinor} were charged this month and this fee is ${fee} ${citation(rule)}.`,
          );
      }
      return undefined;
    },
  },
  {
    name: 'within the earnings balance',
    step: 'amounts',
    code: 'EARNINGS_BALANCE_EXCEEDED',
    when: '',
    refusal: ({ request, money }) =>
      request.amountMinor <= money.balanceMinor
        ? undefined
        : refuse(
            'EARNINGS_BALANCE_EXCEEDED',
            `amount ${request.amountMinor} is more than the ${money.balanceMinor} available.`,
            AMOUNT,
          ),
  },
  {
    name: 'advances in 24 hours',
    step: 'limits',
    code: 'TRANSFER_LIMIT_EXCEEDED',
    when: 'as many advances as allowed were made in the last 24 hours',
    refusal: (facts) => {
      const { dailyTransferCountMax } = policyOf(facts);
      const { recentCount } = facts.money;
      return recentCount < dailyTransferCountMax
        ? undefined
        : refuse(
            'TRANSFER_LIMIT_EXCEEDED',
            `At most ${dailyTransferCountMax} advances in 24 hours; ${recentCount} were made.`,
          );
    },
  },
  {
    name: 'amount in 24 hours',
    step: 'limits',
    code: 'TRANSFER_AMOUNT_LIMIT_EXCEEDED',
    when: "the last 24 hours' advances and this one add up to more than allowed",
    refusal: (facts) => {
      const { dailyTransferAmountMaxMinor } = policyOf(facts);
      const { recentMinor } = facts.money;
      return recentMinor + facts.request.amountMinor <= dailyTransferAmountMaxMinor
        ? undefined
        : refuse(
            'TRANSFER_AMOUNT_LIMIT_EXCEEDED',
            `At most ${dailyTransferAmountMaxMinor} in 24 hours; ${recentMinor} was taken already.`,
            AMOUNT,
          );
    },
  },
  {
    name: 'state amount per pay period',
    step: 'limits',
    code: 'TRANSFER_AMOUNT_LIMIT_EXCEEDED',
    when: "the advances of the pay period the advance is funded from and this one would reach the limit of the person's state, an `AMOUNT_LIMIT_PER_PERIOD` rule",
    refusal: (facts) => {
      for (const rule of rulesOfKind(facts.jurisdiction, 'AMOUNT_LIMIT_PER_PERIOD')) {
        const limit = rule.params.less_than_minor;
        const over = sharesOf(facts).find(
          (share) => share.paycheck.debited_minor + share.amountMinor >= limit,
        );
        if (over)
          return refuse(
            'TRANSFER_AMOUNT_LIMIT_EXCEEDED',
            `${facts.jurisdiction?.stateName} allows advances of less than ${limit} in a pay period; ` +
              `${over.paycheck.debited_minor} was advanced in this one already ${citation(rule)}.`,
            AMOUNT,
          );
      }
      return undefined;
    },
  },
  {
    name: 'state advances with a fee per pay period',
    step: 'limits',
    code: 'TRANSFER_LIMIT_EXCEEDED',
    when: "the advance has a fee and its pay period has as many advances with a fee as the person's state allows, a `FEE_BEARING_ADVANCES_PER_PERIOD` rule",
    refusal: (facts) => {
      if (feeOf(facts) === 0) return undefined;
      for (const rule of rulesOfKind(facts.jurisdiction, 'FEE_BEARING_ADVANCES_PER_PERIOD')) {
        const max = rule.params.max_advances;
        const full = sharesOf(facts).find((share) => share.paycheck.fee_bearing_advances >= max);
        if (full)
          return refuse(
            'TRANSFER_LIMIT_EXCEEDED',
            `${facts.jurisdiction?.stateName} allows at most ${max === 1 ? 'one advance' : `${max} advances`} with a fee per pay period; ` +
              `this one has ${full.paycheck.fee_bearing_advances} and this advance's fee is ${feeOf(facts)} ${citation(rule)}.`,
          );
      }
      return undefined;
    },
  },
  {
    name: 'not a duplicate',
    step: 'duplicates',
    code: 'DUPLICATE_TRANSFER',
    when: 'an advance of the same amount to the same destination within `EWA_DUPLICATE_TRANSFER_WINDOW_SECONDS`, unless that is 0',
    refusal: ({ money, request, destination, duplicateWindowMs }) =>
      !money.twin
        ? undefined
        : refuse(
            'DUPLICATE_TRANSFER',
            `An advance of ${request.amountMinor} to ${destination?.id} was made in the last ${Math.round(duplicateWindowMs / 1000)} s.`,
          ),
  },
  {
    name: 'transfer id unused',
    step: 'duplicates',
    code: 'INVALID_PARAMETERS',
    // A preview answers what the request would: a used id is refused for it too.
    when: 'the `data.id` sent is already the id of any transfer',
    refusal: ({ money, transferId }) => (money.idTaken ? transferIdTaken(transferId) : undefined),
  },
];

/** The refusal of a client id already used: by the checks, or by the write when a race took it since. */
export function transferIdTaken(id: string): AppError {
  return refuse('INVALID_PARAMETERS', `A transfer with id ${id.toLowerCase()} exists already.`, '/data/id');
}

/** The first refusal of the checks, in their order; undefined when the advance passes them all. */
export function firstRefusal(
  facts: AdvanceFacts,
  checks: readonly AdvanceCheck[] = ADVANCE_CHECKS,
): AppError | undefined {
  for (const check of checks) {
    const refusal = check.refusal(facts);
    if (refusal) return refusal;
  }
  return undefined;
}

/**
 * The checks as documentation: a numbered Markdown list, one item per step (docs/integrators/sandbox.md's), or one line of plain
 * text (the route's description in the OpenAPI document).
 */
export function describeAdvanceChecks(format: 'markdown' | 'plain'): string {
  const steps = [...new Set(ADVANCE_CHECKS.map((check) => check.step))];
  const items = steps.map((step) =>
    ADVANCE_CHECKS.filter((check) => check.step === step).map((check) =>
      format === 'markdown'
        ? `\`${check.code}\`${check.when ? ` (${check.when})` : ''}`
        : `${check.code}${check.when ? ` (${check.when.replaceAll('`', '')})` : ''}`,
    ),
  );
  if (format === 'plain') return items.map((codes) => codes.join(', ')).join('; ');
  return items.map((codes, index) => `${index + 1}. ${steps[index]}: ${codes.join(', ')};`).join('\n');
}
