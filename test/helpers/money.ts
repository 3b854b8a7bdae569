import type { EarningsInput } from '../../src/money/earnings/earnings-recorder.ts';
import { CardTokenKeys } from '../../src/tokenization/card-token.ts';
import type { TestApp } from './build-test-app.ts';
import {
  bankAccountBody,
  createOrganization,
  createWorker,
  restClient,
  type Worker,
  workerToken,
} from './factories.ts';

export interface PaidWorker extends Worker {
  organizationId: string;
  token: string;
  api: ReturnType<typeof restClient>;
  depositoryId: string;
  balanceAccountId: string;
}

/**
 * A worker ready to take advances: state of residence set, a bank account that is the job's default (so direct
 * deposit is SETUP_COMPLETE), and — when `earnedMinor` is given — shifts worked this period, recorded through the
 * real earnings recorder.
 */
export async function createPaidWorker(
  app: TestApp,
  options: {
    organizationId?: string;
    policy?: Record<string, unknown>;
    earnedMinor?: number;
    now?: Date;
  } = {},
): Promise<PaidWorker> {
  const organizationId =
    options.organizationId ?? (await createOrganization(app, { policy: options.policy ?? {} }));
  const worker = await createWorker(app, organizationId);
  const { db } = app.database;
  await db
    .updateTable('people')
    .set({ state_of_residence: 'NY' })
    .where('id', '=', worker.personId)
    .execute();
  const token = await workerToken(app, worker.personId);
  const api = restClient(app, token);
  const created = await api.post(
    '/rest/accounts',
    bankAccountBody(
      worker.personId,
      { name: 'Checking' },
      { account_number: `0001${worker.personId.replace(/\D/g, '').slice(0, 8).padEnd(8, '7')}` },
    ),
  );
  if (created.statusCode !== 200) throw new Error(`bank account: ${created.body}`);
  const depositoryId = created.json().data.id as string;
  const patched = await api.patch(`/rest/jobs/${worker.jobId}`, {
    data: {
      type: 'jobs',
      id: worker.jobId,
      relationships: { direct_deposit_default_depository: { data: { type: 'accounts', id: depositoryId } } },
    },
  });
  if (patched.statusCode !== 200) throw new Error(`job default: ${patched.body}`);
  const paid: PaidWorker = {
    ...worker,
    organizationId,
    token,
    api,
    depositoryId,
    balanceAccountId: worker.balanceAccountId as string,
  };
  if (options.earnedMinor) await recordShift(app, paid.jobId, options.earnedMinor, options.now ?? new Date());
  return paid;
}

/** `count` workers of one new employer, each paid 40 000 (15 000 available) at `now`. */
export async function createPaidWorkers(app: TestApp, count: number, now: Date): Promise<PaidWorker[]> {
  const first = await createPaidWorker(app, { earnedMinor: 40_000, now });
  const all = [first];
  while (all.length < count)
    all.push(await createPaidWorker(app, { organizationId: first.organizationId, earnedMinor: 40_000, now }));
  return all;
}

/** The person's advances (transfers out of an earnings balance), as stored. */
export function advancesOf(app: TestApp, worker: { personId: string }) {
  return app.database.db
    .selectFrom('transfers')
    .select(['id', 'amount_minor'])
    .where('person_id', '=', worker.personId)
    .where('origin_account_id', 'is not', null)
    .execute();
}

let shiftNumber = 0;

/** One shift of this amount, worked on the day before `now` (UTC date), through the earnings recorder. */
export async function recordShift(
  app: TestApp,
  jobId: string,
  amountMinor: number,
  now: Date,
  workedOn?: string,
) {
  shiftNumber += 1;
  const input: EarningsInput = {
    jobId,
    externalId: `shift-${shiftNumber}`,
    workedOn: workedOn ?? new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10),
    hoursHundredths: null,
    amountMinor,
    source: 'SHIFT',
  };
  return app.money.earnings.record([input], now, { backdated: 'RECORD' });
}

export function advanceBody(
  worker: { balanceAccountId: string; depositoryId: string },
  attributes: Record<string, unknown> = {},
  relationships: Record<string, unknown> = {},
) {
  return {
    data: {
      type: 'transfers',
      attributes: { amount: 5000, currency: 'USD', schedule: 'NEXT_BUSINESS_DAY', ...attributes },
      relationships: {
        origin: { data: { type: 'accounts', id: worker.balanceAccountId } },
        destination: { data: { type: 'accounts', id: worker.depositoryId } },
        ...relationships,
      },
    },
  };
}

/** POST /rest/transfers with an Idempotency-Key (a fresh one unless given). */
export function postTransfer(
  app: TestApp,
  token: string,
  body: unknown,
  key: string = crypto.randomUUID(),
  query = '',
) {
  return app.api.inject({
    method: 'POST',
    url: `/rest/transfers${query}`,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/vnd.api+json',
      'idempotency-key': key,
    },
    payload: JSON.stringify(body),
  });
}

/** The earnings balance as the person reads it: GET /rest/accounts/{id}, balances.available. */
export async function availableMinor(worker: { api: PaidWorker['api']; balanceAccountId: string }) {
  const response = await worker.api.get(`/rest/accounts/${worker.balanceAccountId}`);
  if (response.statusCode !== 200) throw new Error(`earnings balance: ${response.body}`);
  return response.json().data.attributes.balances.available as number;
}

/** What a refused request must leave as it was: the person's balance and transfers, and the whole ledger. */
export async function moneyFootprint(app: TestApp, worker: PaidWorker) {
  const { db } = app.database;
  const transfers = await db
    .selectFrom('transfers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('person_id', '=', worker.personId)
    .executeTakeFirstOrThrow();
  const entries = await db
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return {
    available: await availableMinor(worker),
    transfers: Number(transfers.n),
    ledgerEntries: Number(entries.n),
  };
}

/** Overrides columns of an organization's policy row directly, even past what the admin API would accept. */
export async function setPolicy(app: TestApp, organizationId: string, changes: Record<string, unknown>) {
  await app.database.db
    .updateTable('organization_policies')
    .set(changes)
    .where('organization_id', '=', organizationId)
    .execute();
}

/** A debit card (one of the sandbox test cards) added through POST /rest/accounts with a fresh card token. */
export async function addCardAccount(app: TestApp, worker: PaidWorker, now: Date): Promise<string> {
  const keys = await CardTokenKeys.fromConfig(app.config.cards.tokenKeys);
  const card = {
    card_number: '4111111111111111',
    expiration_month: '02',
    expiration_year: '2030',
    first_name: 'Robin',
    last_name: 'Lee',
    address_line_one: '1 Main St',
    address_city: 'Albany',
    address_state: 'NY',
    address_zip_code: '12207',
    address_country: 'US',
  };
  const { token } = await keys.issue(card, now, app.config.cards.tokenTtlSeconds);
  const { card_number: _number, ...details } = card;
  const created = await worker.api.post('/rest/accounts', {
    data: {
      type: 'accounts',
      attributes: {
        name: 'Debit card',
        account_type: 'CARD',
        subtype: 'DEBIT',
        details: { ...details, token, issuer: '411111' },
      },
      relationships: { person: { data: { type: 'people', id: worker.personId } } },
    },
  });
  if (created.statusCode !== 200) throw new Error(`card account: ${created.body}`);
  return created.json().data.id as string;
}

/** A second bank account of the worker, not the job's default. */
/** The worker's job paid to a new card only: no default depository, the card as default card. Returns the card. */
export async function payToCardOnly(app: TestApp, worker: PaidWorker, now: Date): Promise<string> {
  const card = await addCardAccount(app, worker, now);
  await app.database.db
    .updateTable('jobs')
    .set({ direct_deposit_default_depository_id: null, direct_deposit_default_card_id: card })
    .where('id', '=', worker.jobId)
    .execute();
  return card;
}

export async function addBankAccount(worker: PaidWorker, accountNumber: string): Promise<string> {
  const created = await worker.api.post('/rest/accounts', {
    data: {
      type: 'accounts',
      attributes: {
        name: 'Savings',
        account_type: 'DEPOSITORY',
        subtype: 'SAVINGS',
        details: {
          first_name: 'Robin',
          last_name: 'Lee',
          routing_number: '110000000',
          account_number: accountNumber,
        },
      },
      relationships: { person: { data: { type: 'people', id: worker.personId } } },
    },
  });
  if (created.statusCode !== 200) throw new Error(`bank account: ${created.body}`);
  return created.json().data.id as string;
}

export interface PaycheckState {
  id: string;
  status: string;
  pay_period_starts_at: Date;
  net_earnings_minor: number;
  accessible_minor: number;
  total_debited_minor: number;
  payout_minor: number | null;
  payout_account_id: string | null;
  payout_settle_after: Date | null;
  payout_held_reason: string | null;
  overpayment_recovered_minor: number;
}

/** A job's paychecks as stored, oldest period first, money as numbers. */
export async function paychecksOfJob(app: TestApp, jobId: string): Promise<PaycheckState[]> {
  const rows = await app.database.db
    .selectFrom('paychecks')
    .select([
      'id',
      'status',
      'pay_period_starts_at',
      'net_earnings_minor',
      'accessible_minor',
      'total_debited_minor',
      'payout_minor',
      'payout_account_id',
      'payout_settle_after',
      'payout_held_reason',
      'overpayment_recovered_minor',
    ])
    .where('job_id', '=', jobId)
    .orderBy('pay_period_starts_at')
    .execute();
  return rows.map((row) => ({
    ...(row as unknown as PaycheckState),
    net_earnings_minor: Number(row.net_earnings_minor),
    accessible_minor: Number(row.accessible_minor),
    total_debited_minor: Number(row.total_debited_minor),
    payout_minor: row.payout_minor === null ? null : Number(row.payout_minor),
  }));
}

/** The first error of a JSON:API error response. */
export function firstError(response: { json(): unknown }) {
  const { errors } = response.json() as {
    errors: { code: string; status: string; detail: string; source?: Record<string, string> }[];
  };
  return errors[0]!;
}
