import { randomUUID } from 'node:crypto';
import type { Config } from '../../config.ts';
import { BankAccountSecrets } from '../../crypto/bank-account-secrets.ts';
import type { Db } from '../../db/database.ts';
import type { Page } from '../../db/keyset-page.ts';
import { lockPeople } from '../../db/lock-order.ts';
import { withTransaction } from '../../db/transaction.ts';
import { CREATABLE_SUBTYPES } from '../../domain/account-values.ts';
import { isAbaRoutingNumber, maskNumber, UAT_ROUTING_NUMBER } from '../../domain/routing-number.ts';
import { idAsShown } from '../../domain/uuid.ts';
import { AppError } from '../../errors/app-error.ts';
import { accountBalancesMinor } from '../../ledger/balances.ts';
import type { Caller } from '../../platform/access-tokens.ts';
import type { ListQuery } from '../../platform/list-query.ts';
import type { CardTokenKeys } from '../../tokenization/card-token.ts';
import { findVisiblePerson } from '../people/store.ts';
import { AccountPricer, type AccountPricing } from './account-pricing.ts';
import type { FeeSchedule } from './capabilities.ts';
import { CardAccounts, type PreparedAccount } from './card-accounts.ts';
import type { AccountContext } from './serialize.ts';
import {
  type AccountReadRow,
  type AccountRow,
  clearDefaultAccount,
  countDestinationAccounts,
  type DefaultingJob,
  feeScheduleOf,
  findFeeSchedules,
  findJobsDefaultingTo,
  findPendingTransfersTo,
  findVisibleAccount,
  findVisibleAccounts,
  hasActiveAccountWithFingerprint,
  insertBankAccount,
  markAccountDeleted,
  readVisibleAccount,
} from './store.ts';

export interface AccountView {
  row: AccountRow;
  context: AccountContext;
}

export interface NewAccountRequest {
  name: string;
  accountType: string;
  subtype: string;
  details: Record<string, unknown>;
  personId: string;
}

export function accountNotFound(id: string): AppError {
  return new AppError('RECORD_NOT_FOUND', {
    detail: `No account ${idAsShown(id)} is visible to this token.`,
  });
}

export class AccountService {
  readonly #db: Db;
  readonly #config: Config;
  readonly #secrets: BankAccountSecrets;

  readonly #cards: CardAccounts;

  readonly #pricer: AccountPricer;

  constructor(db: Db, config: Config, cardTokenKeys: CardTokenKeys, pricing: AccountPricing = {}) {
    this.#db = db;
    this.#pricer = new AccountPricer(pricing);
    this.#config = config;
    this.#secrets = new BankAccountSecrets(config.masterKey);
    this.#cards = new CardAccounts(db, config, cardTokenKeys);
  }

  async list(caller: Caller, options: { query: ListQuery; page: Page }): Promise<AccountView[]> {
    if (caller.kind === 'client' && !options.query.filters.some((filter) => filter.field === 'person.id')) {
      throw new AppError('INVALID_PARAMETERS', {
        detail:
          'With a client token, filter[person.id] is required: accounts are listed one person at a time.',
        source: { parameter: 'filter[person.id]' },
      });
    }
    return this.#withReadContext(await findVisibleAccounts(this.#db, caller, options));
  }

  async read(caller: Caller, id: string): Promise<AccountView> {
    const row = await readVisibleAccount(this.#db, caller, id);
    if (!row) throw accountNotFound(id);
    return (await this.#withReadContext([row]))[0]!;
  }

  /**
   * Adds a bank account or a debit card for the signed-in person. Checked in this order: type and subtype, the
   * person, the details (bank: names, ABA routing number, account number, the sandbox's one routing number in UAT;
   * card: the fields, then the card token, which the attempt spends, and that the details match it), the block
   * list, then inside one transaction with the person locked: a duplicate of a live account, the per-person limit.
   */
  async create(caller: Caller, request: NewAccountRequest, now: Date): Promise<AccountView> {
    const subtype = checkTypes(request.accountType, request.subtype);
    if (caller.kind !== 'user' || request.personId.toLowerCase() !== caller.personId) {
      throw new AppError('INVALID_RESOURCE_LINK', {
        detail: 'relationships.person must be the signed-in person.',
        source: { pointer: '/data/relationships/person/data/id' },
      });
    }
    const prepared =
      subtype === 'DEBIT'
        ? await this.#cards.prepare(request.details, now)
        : this.#prepareBankAccount(request.details, subtype);
    const row = await withTransaction(this.#db, async (tx) => {
      // Locking the person serializes this person's account creations, so that the checks below hold at commit.
      const person = await findVisiblePerson(tx, caller, caller.personId, { forUpdate: true });
      if (!person) {
        throw new AppError('INVALID_RESOURCE_LINK', {
          source: { pointer: '/data/relationships/person/data/id' },
        });
      }
      if (await hasActiveAccountWithFingerprint(tx, caller.personId, prepared.fingerprint)) {
        throw new AppError('DUPLICATE_ACCOUNT', { detail: prepared.duplicateDetail });
      }
      await prepared.checkAcrossPeople?.(tx, caller.personId);
      const limit = this.#config.accounts.perPersonMax;
      if ((await countDestinationAccounts(tx, caller.personId)) >= limit) {
        throw new AppError('INVALID_PARAMETERS', {
          detail: `A person may hold at most ${limit} bank accounts and cards; delete one first.`,
          source: { pointer: '/data/relationships/person/data/id' },
        });
      }
      return prepared.insert(tx, { id: randomUUID(), personId: caller.personId, name: request.name, now });
    });
    return (await this.#withContext(this.#db, [row]))[0]!;
  }

  #prepareBankAccount(rawDetails: Record<string, unknown>, subtype: 'CHECKING' | 'SAVINGS'): PreparedAccount {
    const details = this.#checkBankDetails(rawDetails);
    this.#checkNotBlocked(details.routingNumber, details.accountNumber);
    const fingerprint = this.#secrets.fingerprint(details.routingNumber, details.accountNumber);
    return {
      fingerprint,
      duplicateDetail: 'This person already has a bank account with this routing and account number.',
      insert: (tx, { id, personId, name, now }) =>
        insertBankAccount(tx, {
          id,
          personId,
          subtype,
          name,
          currency: 'USD',
          details: {
            first_name: details.firstName,
            last_name: details.lastName,
            routing_number: maskNumber(details.routingNumber),
            account_number: maskNumber(details.accountNumber),
          },
          routingNumber: details.routingNumber,
          accountNumberSealed: this.#secrets.sealAccountNumber(id, details.accountNumber),
          fingerprint,
          now,
        }),
    };
  }

  /**
   * Removes a bank account or card from use. The row stays (deleted_at), so that transfers and ledger entries
   * that name it keep their history. Refused for an earnings balance, for a job's default account and for the
   * destination of a transfer still in flight. The person's lock comes first (db/lock-order.ts): an advance to the
   * account, or a job made to default to it, holds that lock from its check to its commit, so the checks below run
   * either after it committed (and see its transfer or default) or before it read (and it sees the account gone).
   */
  async delete(caller: Caller, id: string, now: Date): Promise<void> {
    await withTransaction(this.#db, async (tx) => {
      const found = await findVisibleAccount(tx, caller, id);
      if (!found) throw accountNotFound(id);
      await lockPeople(tx, [found.person_id]);
      const account = await findVisibleAccount(tx, caller, id, { forUpdate: true });
      if (!account) throw accountNotFound(id);
      if (account.account_type === 'EARNINGS_BALANCE') {
        throw new AppError('INVALID_PARAMETERS', {
          detail: 'An EARNINGS_BALANCE account belongs to its job and cannot be deleted.',
          source: { parameter: 'account_id' },
        });
      }
      const jobs = await findJobsDefaultingTo(tx, id);
      for (const job of jobs) refuseIfPaysInto(job);
      const transfers = await findPendingTransfersTo(tx, id);
      if (transfers.length > 0) {
        throw new AppError('INVALID_RESOURCE_STATE', {
          detail: `Transfer ${transfers.join(', ')} to this account is still PENDING; delete it once it has settled or failed.`,
        });
      }
      await clearDefaultAccount(
        tx,
        id,
        jobs.map((job) => job.id),
        now,
      );
      await markAccountDeleted(tx, id, now);
    });
  }

  #checkBankDetails(details: Record<string, unknown>) {
    const text = (field: string, pattern: RegExp, what: string) => {
      const pointer = `/data/attributes/details/${field}`;
      const value = details[field];
      if (value === undefined || value === null || value === '') {
        throw new AppError('MISSING_REQUIRED_FIELD', {
          detail: `details.${field} is required.`,
          source: { pointer },
        });
      }
      if (typeof value !== 'string' || !pattern.test(value)) {
        throw new AppError('INVALID_FIELDS', {
          detail: `details.${field} must be ${what}.`,
          source: { pointer },
        });
      }
      return value;
    };
    // Letters, marks, spaces and the punctuation of names; no control characters.
    const name = /^(?=.*\S)[\p{L}\p{M}\p{N} .,'’-]{1,100}$/u;
    const firstName = text('first_name', name, 'a name of 1 to 100 characters');
    const lastName = text('last_name', name, 'a name of 1 to 100 characters');
    const routingNumber = text('routing_number', /^\d{9}$/, 'nine digits');
    const uat = this.#config.env === 'uat';
    const accountNumber = uat
      ? text('account_number', /^\d{8,17}$/, '8 to 17 digits in the sandbox')
      : text('account_number', /^\d{4,17}$/, '4 to 17 digits');
    const routingPointer = { pointer: '/data/attributes/details/routing_number' };
    if (!isAbaRoutingNumber(routingNumber)) {
      throw new AppError('INVALID_FIELDS', {
        detail: 'details.routing_number fails the ABA checksum; check it for a typing error.',
        source: routingPointer,
      });
    }
    if (uat && routingNumber !== UAT_ROUTING_NUMBER) {
      throw new AppError('INVALID_FIELDS', {
        detail: `The sandbox accepts only the test routing number ${UAT_ROUTING_NUMBER}.`,
        source: routingPointer,
      });
    }
    const unknown = Object.keys(details).find(
      (key) => !['first_name', 'last_name', 'routing_number', 'account_number'].includes(key),
    );
    if (unknown !== undefined) {
      throw new AppError('INVALID_PARAMETERS', {
        detail: `details.${unknown} is not a field of a DEPOSITORY account.`,
        source: { pointer: `/data/attributes/details/${unknown}` },
      });
    }
    return { firstName, lastName, routingNumber, accountNumber };
  }

  #checkNotBlocked(routingNumber: string, accountNumber: string): void {
    const blocked = this.#config.accounts.bankAccountBlockList.some(
      (entry) =>
        entry.routingNumber === routingNumber &&
        (entry.accountPrefix === undefined || accountNumber.startsWith(entry.accountPrefix)),
    );
    if (blocked) throw new AppError('BANK_ACCOUNT_CREATION_BLOCKED');
  }

  /** Reads: the balance and fee schedule came with the rows (one round trip). */
  async #withReadContext(rows: readonly AccountReadRow[]): Promise<AccountView[]> {
    const priced = new Map<string, FeeSchedule | undefined>();
    for (const row of rows) {
      if (priced.has(row.person_id)) continue;
      const schedule = feeScheduleOf(row);
      priced.set(row.person_id, schedule && (await this.#pricer.priced(this.#db, schedule)));
    }
    return rows.map((row) => ({
      row,
      context: {
        balanceMinor: row.balance_minor === null ? undefined : Number(row.balance_minor),
        feeSchedule: priced.get(row.person_id),
        advanceOrigin: row.advance_origin,
      },
    }));
  }

  async #withContext(db: Db, rows: readonly AccountRow[]): Promise<AccountView[]> {
    const balanceIds = rows.filter((row) => row.account_type === 'EARNINGS_BALANCE').map((row) => row.id);
    const [balances, schedules] = await Promise.all([
      accountBalancesMinor(db, balanceIds),
      findFeeSchedules(db, [...new Set(rows.map((row) => row.person_id))]),
    ]);
    const priced = new Map<string, FeeSchedule>();
    for (const [personId, schedule] of schedules)
      priced.set(personId, await this.#pricer.priced(db, schedule));
    return rows.map((row) => ({
      row,
      context: { balanceMinor: balances.get(row.id), feeSchedule: priced.get(row.person_id) },
    }));
  }
}

/** The type and subtype of a new account, each refused with its own code (the description's order). */
function checkTypes(accountType: string, subtype: string): 'CHECKING' | 'SAVINGS' | 'DEBIT' {
  if (!Object.hasOwn(CREATABLE_SUBTYPES, accountType)) {
    throw new AppError('ACCOUNT_TYPE_INVALID', {
      detail:
        accountType === 'EARNINGS_BALANCE'
          ? 'EARNINGS_BALANCE accounts come with a job and cannot be created; add a DEPOSITORY or CARD account.'
          : `account_type must be DEPOSITORY or CARD (got ${accountType}).`,
      source: { pointer: '/data/attributes/account_type' },
    });
  }
  if (!Object.values(CREATABLE_SUBTYPES).flat().includes(subtype)) {
    throw new AppError('ACCOUNT_SUBTYPE_INVALID', {
      detail: `subtype must be CHECKING, SAVINGS or DEBIT (got ${subtype}).`,
      source: { pointer: '/data/attributes/subtype' },
    });
  }
  if (!CREATABLE_SUBTYPES[accountType]!.includes(subtype)) {
    throw new AppError('ACCOUNT_TYPE_SUBTYPE_MISMATCH', {
      detail: `A ${accountType} account takes subtype ${CREATABLE_SUBTYPES[accountType]!.join(' or ')}, not ${subtype}.`,
      source: { pointer: '/data/attributes/subtype' },
    });
  }
  return subtype as 'CHECKING' | 'SAVINGS' | 'DEBIT';
}

/**
 * Whether a job's paychecks still need the account it pays into by default. A default card beside a default bank
 * account is only the fallback, and may go. An ACTIVATED job's sole default may not: payday needs one, and the
 * worker can set another first. A job that is not ACTIVATED cannot have its default changed (ACTIVE_JOB_REQUIRED),
 * so its account may go once nothing is left for it to pay in.
 */
function refuseIfPaysInto(job: DefaultingJob): void {
  if (job.card_beside_depository) return;
  if (job.activation_status === 'ACTIVATED') {
    throw new AppError('INVALID_RESOURCE_STATE', {
      detail: `The account is the default paycheck destination of job ${job.id}; set another default first.`,
    });
  }
  if (job.unpaid_paycheck_id !== null) {
    const expected = new Date(job.unpaid_deposit_expected_at ?? 0).toISOString();
    throw new AppError('INVALID_RESOURCE_STATE', {
      detail:
        `The account is the default paycheck destination of job ${job.id}, which is ${job.activation_status}, and ` +
        `its paycheck ${job.unpaid_paycheck_id} (deposit expected ${expected}) is still to be paid into it; ` +
        'delete the account once that paycheck is DEPOSITED.',
    });
  }
}
