import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { GENERIC_PLANS } from '../../db/prepared-pool.ts';
import type { DB } from '../../db/schema.ts';
import { firstFailure, rowsOf, runBatch } from '../../db/statement-batch.ts';
import { withTransaction } from '../../db/transaction.ts';
import { isUuid } from '../../domain/uuid.ts';
import { AppError } from '../../errors/app-error.ts';
import type { KeyedWork, StoredResponse, WorkKind } from '../../idempotency/keyed-work.ts';
import type { SystemLedger } from '../../ledger/ledger-accounts.ts';
import { advanceSubmitted } from '../../ledger/movements.ts';
import { type JobTerms, loadJobTerms } from '../earnings/job-terms.ts';
import { railPaymentMessage } from '../rail-payments.ts';
import { feeFor, fundFifo, type Schedule } from './advance-rules.ts';
import {
  type AdvanceContext,
  type AdvanceReadPlan,
  type AdvanceWrite,
  advanceContextStatement,
  isTransferIdTaken,
  lockEmployersStatement,
  lockPeopleStatement,
  type MoneyState,
  moneyStateStatement,
  readAdvanceContext,
  readMoneyState,
  writeAdvancesStatement,
} from './advance-store.ts';
import type { FundingSourceRow, PersonAccountRow, PersonStanding, TransferRow } from './transfer.ts';

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

/** An advance as a request's two round trips, alone or with others of its kind: see TransferService.advance. */
export interface AdvanceWork {
  kind: WorkKind<AdvanceReadPlan, AdvanceWrite>;
  plan: AdvanceReadPlan;
  /** From this advance's rows of the kind's read statements: the advance, and what it writes unless a preview. */
  decide(
    reads: readonly Record<string, unknown>[][],
    runner: Kysely<DB>,
  ): Promise<{ view: TransferView; write: AdvanceWrite | undefined }>;
  /** The refusal a failed write stands for: a client id taken by a transfer written since it was checked. */
  refusalOf(error: unknown): AppError | undefined;
}

export interface TransferServiceOptions {
  db: Db;
  ledger: SystemLedger;
  /** An advance with the same amount and destination within this window is refused as a duplicate. */
  duplicateWindowMs: number;
}

/** The advance as keyed work: its view becomes the answer stored under its Idempotency-Key. */
export function answeredBy(
  work: AdvanceWork,
  answer: (view: TransferView) => StoredResponse,
): KeyedWork<AdvanceReadPlan, AdvanceWrite> {
  return {
    kind: work.kind,
    plan: work.plan,
    refusalOf: work.refusalOf,
    decide: async (reads, runner) => {
      const { view, write } = await work.decide(reads, runner);
      return { answer: answer(view), write };
    },
  };
}

const DAY_MS = 86_400_000;
/** Where the context and the money state are among the advances' read statements (after the two locks). */
const CONTEXT_READ = 2;
const MONEY_STATE_READ = 3;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

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
  /** Advances read and written together: one statement each for any number of them. */
  readonly advances: WorkKind<AdvanceReadPlan, AdvanceWrite>;

  constructor(options: TransferServiceOptions) {
    this.#options = options;
    const { db } = options;
    this.advances = {
      // The locks first, each statement in lock order (db/lock-order.ts); then the reads, which see what the
      // writers the locks waited for committed.
      reads: (plans, fresh) => [
        lockEmployersStatement(db, plans, fresh),
        lockPeopleStatement(db, plans, fresh),
        advanceContextStatement(db, plans, fresh),
        moneyStateStatement(db, plans, fresh),
      ],
      writes: (writes) => [writeAdvancesStatement(db, writes)],
    };
  }

  /** An advance in a transaction of its own, with no idempotency key: for the demo seed, tests and benchmarks. */
  create(personId: string, request: TransferRequest, now: Date): Promise<TransferView> {
    return withTransaction(this.#options.db, async (tx) => {
      const work = this.advance(personId, request, () => now);
      const read = await runBatch(tx, [GENERIC_PLANS, ...work.kind.reads([work.plan], () => sql`true`)]);
      const { view, write } = await work.decide(
        read.slice(1).map((outcome) => rowsOf<Record<string, unknown>>(outcome)),
        tx,
      );
      if (write === undefined) return view;
      const failure = firstFailure(await runBatch(tx, work.kind.writes([write])));
      if (failure !== undefined) throw work.refusalOf(failure) ?? failure;
      return view;
    });
  }

  /**
   * An advance as two batches of statements in the caller's transaction (which also holds the request's
   * idempotency key), alone or read and written together with others of its kind (`advances`): its plan tells the
   * reads what to lock and read; `decide` checks and prices the advance from what they found and returns what it
   * writes. A preview runs every check, computes fee and funding, and writes nothing.
   */
  advance(personId: string, request: TransferRequest, clock: () => Date): AdvanceWork {
    // The 24-hour limit and the duplicate window are counted back from before the lock is taken, so a wait for the
    // lock can only widen them.
    const startedAt = clock();
    const { duplicateWindowMs } = this.#options;
    const uuidOr = (id: string | undefined) => (id === undefined || isUuid(id) ? id : NIL_UUID);
    return {
      kind: this.advances,
      // An id that is no UUID names no account: the checks refuse it in their turn.
      plan: {
        personId,
        originId: uuidOr(request.originId) ?? NIL_UUID,
        destinationId: uuidOr(request.destinationId),
        amountMinor: request.amountMinor,
        clientId: request.id === undefined ? undefined : request.id.toLowerCase(),
        recentSince: new Date(startedAt.getTime() - DAY_MS),
        twinSince: duplicateWindowMs > 0 ? new Date(startedAt.getTime() - duplicateWindowMs) : undefined,
        preview: request.preview,
      },
      decide: async (reads, runner) => {
        const context = readAdvanceContext(reads[CONTEXT_READ] ?? []);
        const money = readMoneyState(reads[MONEY_STATE_READ] ?? []);
        return this.decide({ personId, request, context, money, clock, runner });
      },
      refusalOf: (error) => (isTransferIdTaken(error) ? idTaken(request.id ?? '') : undefined),
    };
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
   * Throws every refusal before anything is written. `clock` is read here, once the person is locked, so advances
   * of one person are stamped in the order they commit.
   */
  async decide(input: {
    personId: string;
    request: TransferRequest;
    context: AdvanceContext | undefined;
    money: MoneyState | undefined;
    clock: () => Date;
    runner: Kysely<DB>;
  }): Promise<{ view: TransferView; write: AdvanceWrite | undefined }> {
    const { personId, request, context, runner } = input;
    const originLink = () =>
      refuse(
        'INVALID_RESOURCE_LINK',
        `origin ${request.originId} is not an account of this person.`,
        '/data/relationships/origin',
      );
    if (!isUuid(request.originId)) throw originLink();
    if (!context || !input.money) throw new Error(`person ${personId} of a live token is missing`);
    const now = input.clock();
    const { origin } = context;
    if (!origin) throw originLink();
    if (request.personId !== undefined && request.personId.toLowerCase() !== personId)
      throw refuse(
        'INVALID_RESOURCE_LINK',
        `person ${request.personId} is not the signed-in person.`,
        '/data/relationships/person',
      );
    const terms =
      context.terms ??
      (context.jobId ? (await loadJobTerms(runner, [context.jobId])).get(context.jobId) : undefined);
    checkEligibility(context.standing, terms);
    if (terms?.activationStatus !== 'ACTIVATED')
      throw refuse(
        'INELIGIBLE_ORIGIN',
        origin.account_type === 'EARNINGS_BALANCE'
          ? `The job of earnings balance ${origin.id} is not active.`
          : `Advances come from an EARNINGS_BALANCE account; ${origin.id} is ${origin.account_type}.`,
        '/data/relationships/origin',
      );
    const destination = checkDestination(request, context.destination);
    const fee = feeFor(terms.policy, destination.account_type, request.schedule);
    if (fee === null)
      throw refuse(
        'INVALID_TRANSFER_SCHEDULE',
        `${request.schedule} is not offered to ${destination.account_type} accounts by this employer.`,
        '/data/attributes/schedule',
      );
    const currency = terms.policy.currency;
    if (request.currency !== currency)
      throw refuse(
        'INVALID_PARAMETERS',
        `currency must be ${currency}, the currency of the earnings balance.`,
        '/data/attributes/currency',
      );
    const id = request.id?.toLowerCase() ?? randomUUID();
    const { money } = input;
    checkAmounts(request.amountMinor, fee, terms, money.balanceMinor);
    checkLimits(request.amountMinor, terms, money);
    if (money.twin)
      throw refuse(
        'DUPLICATE_TRANSFER',
        `An advance of ${request.amountMinor} to ${destination.id} was made in the last ${Math.round(this.#options.duplicateWindowMs / 1000)} s.`,
      );
    // A preview answers what the request would: a used id is refused for it too.
    if (money.idTaken) throw idTaken(id);
    const shares = fundFifo(money.fundable, request.amountMinor);
    if (!shares)
      throw new Error(`earnings balance ${origin.id}: its open paychecks do not add up to its balance`);
    const system = await this.#options.ledger.existingIn(runner, terms.organizationId, currency);
    if (!system || !context.balanceLedgerId)
      throw new Error(`earnings balance ${origin.id} has money but its employer has no ledger accounts`);
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
      rail_reference: null,
      settle_after: null,
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
    // A preview writes nothing and tells the rail nothing.
    if (request.preview) return { view, write: undefined };
    const destinationKind = destination.account_type as 'DEPOSITORY' | 'CARD';
    const movement = advanceSubmitted(
      {
        transferId: id,
        earningsBalance: context.balanceLedgerId,
        destination: destinationKind,
        amountMinor: request.amountMinor,
        feeMinor: fee,
        currency,
      },
      system,
      now,
    );
    const payment = railPaymentMessage({
      reference: id,
      purpose: 'ADVANCE',
      requestedAmountMinor: request.amountMinor,
      deliveredAmountMinor: request.amountMinor - fee,
      currency,
      schedule: request.schedule,
      destinationAccountId: destination.id,
      destinationKind,
      submittedAt: now,
    });
    return { view, write: { row, sources, movement, payment } };
  }
}

function idTaken(id: string): AppError {
  return refuse('INVALID_PARAMETERS', `A transfer with id ${id.toLowerCase()} exists already.`, '/data/id');
}

/** The destination sent, else the job's default depository; it must be the person's live bank account or card. */
function checkDestination(request: TransferRequest, found: PersonAccountRow | undefined): PersonAccountRow {
  if (request.destinationId === undefined) {
    if (!found)
      throw refuse(
        'MISSING_DEFAULT_DEPOSITORY_ACCOUNT',
        'No destination was sent and the job has no default depository account.',
        '/data/relationships/destination',
      );
    return found;
  }
  if (!found || (found.account_type !== 'DEPOSITORY' && found.account_type !== 'CARD'))
    throw refuse(
      'INVALID_DESTINATION',
      `destination ${request.destinationId} is not a bank account or card of this person.`,
      '/data/relationships/destination',
    );
  return found;
}

function checkEligibility(person: PersonStanding, terms: JobTerms | undefined): void {
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

function checkAmounts(amountMinor: number, fee: number, terms: JobTerms, balance: number): void {
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
  if (amountMinor > balance)
    throw refuse(
      'EARNINGS_BALANCE_EXCEEDED',
      `amount ${amountMinor} is more than the ${balance} available.`,
      '/data/attributes/amount',
    );
}

function checkLimits(amountMinor: number, terms: JobTerms, recent: MoneyState): void {
  const { policy } = terms;
  if (recent.recentCount >= policy.dailyTransferCountMax)
    throw refuse(
      'TRANSFER_LIMIT_EXCEEDED',
      `At most ${policy.dailyTransferCountMax} advances in 24 hours; ${recent.recentCount} were made.`,
    );
  if (recent.recentMinor + amountMinor > policy.dailyTransferAmountMaxMinor)
    throw refuse(
      'TRANSFER_AMOUNT_LIMIT_EXCEEDED',
      `At most ${policy.dailyTransferAmountMaxMinor} in 24 hours; ${recent.recentMinor} was taken already.`,
      '/data/attributes/amount',
    );
}
