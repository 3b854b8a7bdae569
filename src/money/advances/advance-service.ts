import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { jurisdictionOf, rulesOfKind } from '../../compliance/jurisdiction.ts';
import { COUNTING_KINDS, RuleBook } from '../../compliance/rule-book.ts';
import type { Db } from '../../db/database.ts';
import { GENERIC_PLANS } from '../../db/prepared-pool.ts';
import type { DB } from '../../db/schema.ts';
import { firstFailure, rowsOf, runBatch } from '../../db/statement-batch.ts';
import { withTransaction } from '../../db/transaction.ts';
import { transferDisclosureOf } from '../../disclosures/transfer-disclosure.ts';
import { isUuid } from '../../domain/uuid.ts';
import type { AppError } from '../../errors/app-error.ts';
import type { KeyedWork, StoredResponse, WorkKind } from '../../idempotency/keyed-work.ts';
import type { SystemLedger } from '../../ledger/ledger-accounts.ts';
import { advanceSubmitted } from '../../ledger/movements.ts';
import { loadJobTerms } from '../earnings/job-terms.ts';
import { railPaymentMessage } from '../rail-payments.ts';
import { type AdvanceFacts, firstRefusal, transferIdTaken } from './advance-checks.ts';
import { feeFor, feesWithinReach, fundFifo, type Schedule } from './advance-rules.ts';
import {
  type AdvanceRead,
  type AdvanceReadPlan,
  type AdvanceWrite,
  advanceReadStatements,
  isTransferIdTaken,
  readAdvance,
  rereadDisclosure,
  rereadMoneyState,
  writeAdvancesStatement,
} from './advance-store.ts';
import {
  type FundingSource,
  type FundingSourceRow,
  fundingSourceOf,
  type Transfer,
  type TransferRow,
  transferOf,
} from './transfer.ts';

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
  /** meta.disclosure_acknowledged: the person saw this request's terms (its preview) and acknowledged them. */
  disclosureAcknowledged?: boolean;
}

/** A transfer with its funding sources, as an advance answers it (a preview is never written). */
export interface TransferView {
  transfer: Transfer;
  sources: FundingSource[];
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
  /** The kinds of account the configured rails pay; all when not given. */
  payableDestinations?: readonly string[] | undefined;
  /** The kinds of account they pay within thirty minutes; all they pay when not given. */
  instantDestinations?: readonly string[] | undefined;
  /** The states' compliance rules: the repository's file with the operator's overrides, unless a test gives its own. */
  rules?: RuleBook | undefined;
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
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

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
  readonly #rules: RuleBook;
  /** Advances read and written together: one statement each for any number of them. */
  readonly advances: WorkKind<AdvanceReadPlan, AdvanceWrite>;

  constructor(options: TransferServiceOptions) {
    this.#options = options;
    this.#rules = options.rules ?? new RuleBook();
    const { db } = options;
    this.advances = {
      reads: (plans, fresh) => advanceReadStatements(db, plans, fresh),
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
    const plan: AdvanceReadPlan = {
      personId,
      originId: uuidOr(request.originId) ?? NIL_UUID,
      destinationId: uuidOr(request.destinationId),
      amountMinor: request.amountMinor,
      clientId: request.id === undefined ? undefined : request.id.toLowerCase(),
      recentSince: new Date(startedAt.getTime() - DAY_MS),
      startedAt,
      twinSince: duplicateWindowMs > 0 ? new Date(startedAt.getTime() - duplicateWindowMs) : undefined,
      preview: request.preview,
      countIn: this.#rules.countingStates()?.states,
      discloseIn: this.#rules.disclosureStates(),
    };
    return {
      kind: this.advances,
      // An id that is no UUID names no account: the checks refuse it in their turn.
      plan,
      decide: (reads, runner) =>
        this.decide({ personId, request, read: readAdvance(reads), clock, runner, plan }),
      refusalOf: (error) => (isTransferIdTaken(error) ? transferIdTaken(request.id ?? '') : undefined),
    };
  }

  /**
   * Lock and read happened in the kind's statements (advance-store.ts); here the advance is checked in the
   * documented order (advance-checks.ts), priced, funded first in, first out, and composed as what it writes.
   * Throws the first refusal before anything is written. `clock` is read here, once the person is locked, so
   * advances of one person are stamped in the order they commit.
   */
  async decide(input: {
    personId: string;
    request: TransferRequest;
    read: AdvanceRead | undefined;
    clock: () => Date;
    runner: Kysely<DB>;
    /** What the reads were asked (absent: they counted for everyone). */
    plan?: AdvanceReadPlan;
  }): Promise<{ view: TransferView; write: AdvanceWrite | undefined }> {
    const { personId, request, read, runner } = input;
    if (!read) throw new Error(`person ${personId} of a live token is missing`);
    const now = input.clock();
    const facts = await this.#factsOf(personId, request, read, runner, now, input.plan);
    const refusal = firstRefusal(facts);
    if (refusal) throw refusal;
    const { origin, terms, destination, fee, money, transferId: id } = facts;
    if (!origin || !terms || !destination || fee === null)
      throw new Error('an advance passed its checks without an origin, terms, destination and fee');
    const currency = terms.policy.currency;
    const shares = fundFifo(money.fundable, request.amountMinor);
    if (!shares)
      throw new Error(`earnings balance ${origin.id}: its open paychecks do not add up to its balance`);
    const system = await this.#options.ledger.existingIn(runner, terms.organizationId, currency);
    if (!system || !read.context.balanceLedgerId)
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
    const view = {
      transfer: transferOf(row),
      sources: sources.map(fundingSourceOf),
      preview: request.preview,
    };
    // A preview writes nothing and tells the rail nothing.
    if (request.preview) return { view, write: undefined };
    const destinationKind = destination.account_type as 'DEPOSITORY' | 'CARD';
    const movement = advanceSubmitted(
      {
        transferId: id,
        earningsBalance: read.context.balanceLedgerId,
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
    const firstPaycheck = money.fundable.find((paycheck) => paycheck.id === shares[0]?.paycheckId);
    if (!firstPaycheck)
      throw new Error(`advance ${id}: its first funding paycheck is not among the fundable ones`);
    const disclosure = transferDisclosureOf({
      transferId: id,
      amountMinor: request.amountMinor,
      feeMinor: fee,
      currency,
      destinationId: destination.id,
      schedule: request.schedule,
      debitAt: new Date(firstPaycheck.deposit_expected_at),
      timeZone: terms.policy.timeZone,
      disclosure: facts.disclosure,
      acknowledged: request.disclosureAcknowledged === true,
      stateOfResidence: read.context.standing.state_of_residence?.trim() || null,
      now,
    });
    return { view, write: { row, sources, movement, payment, disclosure } };
  }

  /**
   * What the checks look at: the reads, the job's terms (read here when the employer has no policy row yet), the
   * state's rules on the advance's day, the fee.
   */
  async #factsOf(
    personId: string,
    request: TransferRequest,
    read: AdvanceRead,
    runner: Kysely<DB>,
    now: Date,
    plan: AdvanceReadPlan | undefined,
  ): Promise<AdvanceFacts> {
    const { context } = read;
    let { money } = read;
    const terms =
      context.terms ??
      (context.jobId ? (await loadJobTerms(runner, [context.jobId])).get(context.jobId) : undefined);
    const { destination } = context;
    const state = context.standing.state_of_residence?.trim();
    const jurisdiction = state
      ? jurisdictionOf(
          await this.#rules.at(runner, context.rulesVersion),
          state,
          now,
          // Without the job's terms the origin is refused anyway (INELIGIBLE_ORIGIN); its day is then UTC's.
          terms?.policy.timeZone ?? 'UTC',
        )
      : undefined;
    // The reads counted by the rules as this process knew them; rules newer than that may count for this state.
    const uncounted =
      jurisdiction && plan?.countIn !== undefined && !plan.countIn.includes(jurisdiction.state);
    if (uncounted && jurisdiction.rules.some((rule) => COUNTING_KINDS.includes(rule.kind)) && plan)
      money = (await rereadMoneyState(runner, plan)) ?? money;
    let { disclosure } = context;
    const undisclosed =
      jurisdiction && plan?.discloseIn !== undefined && !plan.discloseIn.includes(jurisdiction.state);
    if (undisclosed && rulesOfKind(jurisdiction, 'DISCLOSURE_BEFORE_FIRST_TRANSFER').length > 0 && plan)
      disclosure = await rereadDisclosure(runner, plan);
    return {
      request,
      personId,
      standing: context.standing,
      origin: context.origin,
      terms,
      destination,
      jurisdiction,
      fee:
        terms && destination
          ? feeFor(
              feesWithinReach(terms.policy, {
                payable: this.#options.payableDestinations,
                instant: this.#options.instantDestinations,
              }),
              destination.account_type,
              request.schedule,
              jurisdiction,
              this.#options.payableDestinations,
            )
          : null,
      railPays:
        !destination || (this.#options.payableDestinations?.includes(destination.account_type) ?? true),
      railPaysSchedule:
        !destination ||
        request.schedule !== 'WITHIN_THIRTY_MINUTES' ||
        (this.#options.instantDestinations?.includes(destination.account_type) ?? true),
      money,
      disclosure,
      transferId: request.id?.toLowerCase() ?? randomUUID(),
      duplicateWindowMs: this.#options.duplicateWindowMs,
    };
  }
}
