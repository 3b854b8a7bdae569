import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import { type Tx, withTransaction } from '../../db/transaction.ts';
import { type JobTerms, loadJobTerms, lockPeople } from '../../earnings/job-terms.ts';
import { AppError } from '../../errors/app-error.ts';
import {
  ensureOwnedLedgerAccount,
  ledgerBalanceMinor,
  type SystemLedger,
} from '../../ledger/ledger-accounts.ts';
import { postMovement } from '../../ledger/posting.ts';
import type { ListQuery } from '../../platform/list-query.ts';
import type { PaymentRail } from '../../rails/payment-rail.ts';
import { feeFor, fundFifo, type Schedule } from './advance-rules.ts';
import {
  addToTotalDebited,
  type FundingSourceRow,
  findFundingSources,
  findJobOfEarningsBalance,
  findLiveAccountOfPerson,
  findPersonStanding,
  findTransferOfPerson,
  findTransfersOfPerson,
  hasRecentTwin,
  insertFundingSources,
  insertTransfer,
  lockFundablePaychecks,
  type PersonAccountRow,
  recentAdvances,
  type TransferRow,
  transferIdTaken,
} from './store.ts';

export interface TransferRequest {
  /** The client's id for the transfer, when it sends one. */
  id: string | undefined;
  amountMinor: number;
  currency: string;
  schedule: Schedule;
  preview: boolean;
  originId: string;
  destinationId: string | undefined;
  personId: string | undefined;
}

export interface TransferView {
  row: TransferRow;
  sources: FundingSourceRow[];
  preview: boolean;
}

export interface TransferServiceOptions {
  db: Db;
  ledger: SystemLedger;
  rail: PaymentRail;
  /** An advance with the same amount and destination within this window is refused as a duplicate. */
  duplicateWindowMs: number;
}

const DAY_MS = 86_400_000;

export function transferNotFound(id: string): AppError {
  return new AppError('RECORD_NOT_FOUND', { detail: `No transfer ${id} is visible to this token.` });
}

function refuse(code: ConstructorParameters<typeof AppError>[0], detail: string, pointer?: string): AppError {
  return new AppError(code, { detail, ...(pointer ? { source: { pointer } } : {}) });
}

/**
 * Advances: a person moves available earnings from an earnings balance to their bank account or card.
 *
 * No double spend: every transaction that changes what a person may take (this one, earnings credits, failures
 * and payday) first locks the person's row (`SELECT … FOR UPDATE`, people in id order), then reads the balance
 * from the ledger. Row locks under READ COMMITTED, not serializable retries: two advances of one person queue
 * on the lock, and the second sees what the first took. Different people never wait on each other.
 */
export class TransferService {
  readonly #options: TransferServiceOptions;

  constructor(options: TransferServiceOptions) {
    this.#options = options;
  }

  async list(personId: string, query: ListQuery, limit: number): Promise<TransferView[]> {
    const rows = await findTransfersOfPerson(this.#options.db, personId, query, limit);
    const sources = await findFundingSources(
      this.#options.db,
      rows.map((row) => row.id),
    );
    return rows.map((row) => ({
      row,
      sources: sources.filter((s) => s.transfer_id === row.id),
      preview: false,
    }));
  }

  async read(personId: string, id: string): Promise<TransferView> {
    const row = await findTransferOfPerson(this.#options.db, personId, id);
    if (!row) throw transferNotFound(id);
    return { row, sources: await findFundingSources(this.#options.db, [id]), preview: false };
  }

  /**
   * Checks the request in the documented order, the first failure answering:
   *   1. links: the origin (and `person`, if sent) must be the caller's → INVALID_RESOURCE_LINK;
   *   2. eligibility: TRANSFERS_DISABLED (the person has a disallow_reason, or the employer turned transfers
   *      off), MISSING_STATE_OF_RESIDENCE, INVALID_DIRECT_DEPOSIT_STATUS (the job's direct deposit is not
   *      SETUP_COMPLETE);
   *   3. origin and destination: INELIGIBLE_ORIGIN (not an earnings balance, or its job is not ACTIVATED),
   *      MISSING_DEFAULT_DEPOSITORY_ACCOUNT (no destination sent and the job has no default depository),
   *      INVALID_DESTINATION (not the person's live DEPOSITORY or CARD), INVALID_TRANSFER_SCHEDULE (the
   *      employer offers no such schedule to that destination); a currency other than the balance's is
   *      INVALID_PARAMETERS;
   *   4. amounts: MINIMUM_AMOUNT_SUBCEEDED (below the minimum, or not above the fee), MAXIMUM_AMOUNT_EXCEEDED,
   *      MAXIMUM_FEE_EXCEEDED, EARNINGS_BALANCE_EXCEEDED;
   *   5. 24-hour limits: TRANSFER_LIMIT_EXCEEDED (count), TRANSFER_AMOUNT_LIMIT_EXCEEDED (sum with this one);
   *   6. DUPLICATE_TRANSFER: an advance of the same amount to the same destination within the window (a window of
   *      zero turns it off); then a client id already used (by anyone) is INVALID_PARAMETERS.
   * A preview runs every check and computes fee and funding, and writes nothing. `within` runs in the transaction
   * that writes the transfer, so a caller can record its response atomically with it.
   */
  async create(
    personId: string,
    request: TransferRequest,
    now: Date,
    within?: (tx: Tx, view: TransferView) => Promise<void>,
  ): Promise<TransferView> {
    const { db, ledger } = this.#options;
    const origin = await findLiveAccountOfPerson(db, personId, request.originId);
    if (!origin)
      throw refuse(
        'INVALID_RESOURCE_LINK',
        `origin ${request.originId} is not an account of this person.`,
        '/data/relationships/origin',
      );
    if (request.personId !== undefined && request.personId.toLowerCase() !== personId)
      throw refuse(
        'INVALID_RESOURCE_LINK',
        `person ${request.personId} is not the signed-in person.`,
        '/data/relationships/person',
      );
    const jobId =
      origin.account_type === 'EARNINGS_BALANCE' ? await findJobOfEarningsBalance(db, origin.id) : undefined;
    const preliminary = jobId ? (await loadJobTerms(db, [jobId])).get(jobId) : undefined;
    const system = preliminary
      ? await ledger.accountsFor(preliminary.organizationId, preliminary.policy.currency)
      : undefined;
    const work = async (tx: Tx): Promise<TransferView> => {
      if (!request.preview) await lockPeople(tx, [personId]);
      const terms = jobId ? (await loadJobTerms(tx, [jobId])).get(jobId) : undefined;
      await checkEligibility(tx, personId, terms);
      if (!terms || !system || terms.activationStatus !== 'ACTIVATED')
        throw refuse(
          'INELIGIBLE_ORIGIN',
          origin.account_type === 'EARNINGS_BALANCE'
            ? `The job of earnings balance ${origin.id} is not active.`
            : `Advances come from an EARNINGS_BALANCE account; ${origin.id} is ${origin.account_type}.`,
          '/data/relationships/origin',
        );
      const destination = await this.#destination(tx, personId, request, terms);
      const fee = feeFor(terms.policy, destination.account_type, request.schedule);
      if (fee === null)
        throw refuse(
          'INVALID_TRANSFER_SCHEDULE',
          `${request.schedule} is not offered to ${destination.account_type} accounts by this employer.`,
          '/data/attributes/schedule',
        );
      if (request.currency !== terms.policy.currency)
        throw refuse(
          'INVALID_PARAMETERS',
          `currency must be ${terms.policy.currency}, the currency of the earnings balance.`,
          '/data/attributes/currency',
        );
      const balanceLedgerId = await ensureOwnedLedgerAccount(tx, 'account', origin.id, terms.policy.currency);
      await checkAmounts(tx, request.amountMinor, fee, terms, balanceLedgerId);
      await checkLimits(tx, personId, request.amountMinor, terms, now);
      if (
        this.#options.duplicateWindowMs > 0 &&
        (await hasRecentTwin(
          tx,
          personId,
          destination.id,
          request.amountMinor,
          new Date(now.getTime() - this.#options.duplicateWindowMs),
        ))
      )
        throw refuse(
          'DUPLICATE_TRANSFER',
          `An advance of ${request.amountMinor} to ${destination.id} was made in the last ${Math.round(this.#options.duplicateWindowMs / 1000)} s.`,
        );
      const fundable = await lockFundablePaychecks(tx, terms.jobId);
      const shares = fundFifo(fundable, request.amountMinor);
      if (!shares)
        throw new Error(
          `ledger and paychecks disagree: earnings balance ${origin.id} is not covered by its paychecks`,
        );
      const id = request.id?.toLowerCase() ?? randomUUID();
      const currency = terms.policy.currency;
      const delivered = request.amountMinor - fee;
      const submission = this.#options.rail.submit({
        reference: id,
        purpose: 'ADVANCE',
        requestedAmountMinor: request.amountMinor,
        deliveredAmountMinor: delivered,
        currency,
        schedule: request.schedule,
        destinationKind: destination.account_type as 'DEPOSITORY' | 'CARD',
        submittedAt: now,
      });
      const row: TransferRow = {
        id,
        person_id: personId,
        origin_account_id: origin.id,
        origin_paycheck_id: null,
        destination_account_id: destination.id,
        amount_minor: request.amountMinor,
        fee_minor: fee,
        currency,
        schedule: request.schedule,
        status: 'PENDING',
        failure_reason: null,
        rail_reference: submission.railReference,
        settle_after: submission.settleAfter,
        submitted_at: now,
        resolved_at: null,
      };
      const sources: FundingSourceRow[] = shares.map((share) => ({
        transfer_id: id,
        paycheck_id: share.paycheckId,
        stage: 'ESTIMATED',
        amount_minor: share.amountMinor,
        currency,
      }));
      const view = { row, sources, preview: request.preview };
      const idTaken = () =>
        refuse('INVALID_PARAMETERS', `A transfer with id ${id} exists already.`, '/data/id');
      // A preview answers what the request would: a used id is refused for it too.
      if (request.id !== undefined && (await transferIdTaken(tx, id))) throw idTaken();
      if (request.preview) return view;
      if (!(await insertTransfer(tx, row))) throw idTaken();
      await insertFundingSources(tx, sources);
      await addToTotalDebited(
        tx,
        shares.map((share) => ({ paycheckId: share.paycheckId, amountMinor: share.amountMinor })),
        now,
      );
      await postMovement(tx, {
        kind: 'ADVANCE_SUBMITTED',
        transferId: id,
        postedAt: now,
        lines: [
          {
            ledgerAccountId: balanceLedgerId,
            direction: 'DEBIT',
            amountMinor: request.amountMinor,
            currency,
          },
          {
            ledgerAccountId:
              destination.account_type === 'CARD' ? system.EXTERNAL_CARD : system.EXTERNAL_BANK,
            direction: 'CREDIT',
            amountMinor: delivered,
            currency,
          },
          { ledgerAccountId: system.FEE_REVENUE, direction: 'CREDIT', amountMinor: fee, currency },
        ],
      });
      if (within) await within(tx, view);
      return view;
    };
    return withTransaction(db, work);
  }

  async #destination(
    tx: Tx,
    personId: string,
    request: TransferRequest,
    terms: JobTerms,
  ): Promise<PersonAccountRow> {
    if (request.destinationId === undefined) {
      const fallback = terms.defaultDepositoryId
        ? await findLiveAccountOfPerson(tx, personId, terms.defaultDepositoryId)
        : undefined;
      if (!fallback)
        throw refuse(
          'MISSING_DEFAULT_DEPOSITORY_ACCOUNT',
          'No destination was sent and the job has no default depository account.',
          '/data/relationships/destination',
        );
      return fallback;
    }
    const destination = await findLiveAccountOfPerson(tx, personId, request.destinationId);
    if (!destination || (destination.account_type !== 'DEPOSITORY' && destination.account_type !== 'CARD'))
      throw refuse(
        'INVALID_DESTINATION',
        `destination ${request.destinationId} is not a bank account or card of this person.`,
        '/data/relationships/destination',
      );
    return destination;
  }
}

async function checkEligibility(tx: Tx, personId: string, terms: JobTerms | undefined): Promise<void> {
  const person = await findPersonStanding(tx, personId);
  if (!person) throw new Error(`person ${personId} of a live token is missing`);
  if (person.disallow_reason !== null)
    throw refuse('TRANSFERS_DISABLED', `Transfers are disabled for this person (${person.disallow_reason}).`);
  if (terms && !terms.policy.transfersEnabled)
    throw refuse('TRANSFERS_DISABLED', 'The employer has turned transfers off.');
  if (person.state_of_residence === null)
    throw refuse(
      'MISSING_STATE_OF_RESIDENCE',
      'Set state_of_residence with PATCH /rest/people/{id} before transferring.',
    );
  if (terms && terms.directDepositStatus !== 'SETUP_COMPLETE')
    throw refuse(
      'INVALID_DIRECT_DEPOSIT_STATUS',
      `The job's direct_deposit_status is ${terms.directDepositStatus}; it must be SETUP_COMPLETE.`,
    );
}

async function checkAmounts(
  tx: Tx,
  amountMinor: number,
  fee: number,
  terms: JobTerms,
  balanceLedgerId: string,
): Promise<void> {
  const { policy } = terms;
  if (amountMinor < policy.minimumTransferMinor || amountMinor <= fee)
    throw refuse(
      'MINIMUM_AMOUNT_SUBCEEDED',
      `amount must be at least ${Math.max(policy.minimumTransferMinor, fee + 1)}.`,
      '/data/attributes/amount',
    );
  if (amountMinor > policy.maximumTransferMinor)
    throw refuse(
      'MAXIMUM_AMOUNT_EXCEEDED',
      `amount must be at most ${policy.maximumTransferMinor}.`,
      '/data/attributes/amount',
    );
  if (fee > policy.maximumFeeMinor)
    throw refuse(
      'MAXIMUM_FEE_EXCEEDED',
      `The fee ${fee} is above the largest fee allowed, ${policy.maximumFeeMinor}.`,
    );
  const balance = await ledgerBalanceMinor(tx, balanceLedgerId);
  if (amountMinor > balance)
    throw refuse(
      'EARNINGS_BALANCE_EXCEEDED',
      `amount ${amountMinor} is more than the ${balance} available.`,
      '/data/attributes/amount',
    );
}

async function checkLimits(
  tx: Tx,
  personId: string,
  amountMinor: number,
  terms: JobTerms,
  now: Date,
): Promise<void> {
  const { policy } = terms;
  const recent = await recentAdvances(tx, personId, new Date(now.getTime() - DAY_MS));
  if (recent.count >= policy.dailyTransferCountMax)
    throw refuse(
      'TRANSFER_LIMIT_EXCEEDED',
      `At most ${policy.dailyTransferCountMax} advances in 24 hours; ${recent.count} were made.`,
    );
  if (recent.amountMinor + amountMinor > policy.dailyTransferAmountMaxMinor)
    throw refuse(
      'TRANSFER_AMOUNT_LIMIT_EXCEEDED',
      `At most ${policy.dailyTransferAmountMaxMinor} in 24 hours; ${recent.amountMinor} was taken already.`,
      '/data/attributes/amount',
    );
}
