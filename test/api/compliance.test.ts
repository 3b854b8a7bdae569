import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { setRule, switchRule } from '../../src/compliance/rule-store.ts';
import { stateRules } from '../../src/compliance/state-rules.ts';
import { buildTestApp, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import { acceptDisclosures } from '../helpers/disclosures.ts';
import {
  advanceBody,
  advancesOf,
  createPaidWorker,
  firstError,
  type PaidWorker,
  postTransfer,
} from '../helpers/money.ts';

/**
 * The states' compliance rules through POST /rest/transfers (and its preview): each kind of rule of the file,
 * its effective dates on the app's clock, the free option a state requires, and the operator's overrides as the
 * next advance sees them. The worker's day is the employer's (America/New_York by default): FIXED_NOW is
 * 2026-03-11 11:30 there.
 */

const OPERATOR = 'test:compliance';

async function setup(
  t: Parameters<typeof buildTestApp>[0],
  state: string,
  options: { policy?: Record<string, unknown>; earnedMinor?: number } = {},
) {
  let clock = FIXED_NOW;
  const app = await buildTestApp(t, {}, { now: () => clock });
  const worker = await createPaidWorker(app, {
    policy: { daily_transfer_count_max: 50, ...options.policy },
    earnedMinor: options.earnedMinor ?? 40_000,
    now: FIXED_NOW,
  });
  await livesIn(app, worker, state);
  // The test file's tests share one database: each leaves the rules as the file has them.
  t.after(async () => {
    await app.database.db.deleteFrom('compliance_rule_overrides').execute();
    await sql`update app_settings set value = to_jsonb((value #>> '{}')::bigint + 1)
      where key = 'compliance_rules_version'`.execute(app.database.db);
  });
  return {
    app,
    worker,
    setClock: (instant: Date) => {
      clock = instant;
    },
  };
}

async function livesIn(app: TestApp, worker: PaidWorker, state: string) {
  await app.database.db
    .updateTable('people')
    .set({ state_of_residence: state })
    .where('id', '=', worker.personId)
    .execute();
  // The disclosures a state asks for are accepted: these tests are about its other rules (test/api/disclosures.test.ts).
  await acceptDisclosures(worker);
}

async function advance(app: TestApp, worker: PaidWorker, attributes: Record<string, unknown>) {
  const response = await postTransfer(app, worker.token, advanceBody(worker, attributes));
  return { status: response.statusCode, body: response.body, json: response.json() };
}

async function accepted(app: TestApp, worker: PaidWorker, attributes: Record<string, unknown>) {
  const answer = await advance(app, worker, attributes);
  assert.equal(answer.status, 200, answer.body);
  return answer.json.data.attributes as { fee: number; amount: number };
}

async function refused(app: TestApp, worker: PaidWorker, attributes: Record<string, unknown>, code: string) {
  for (const preview of [true, false]) {
    const response = await postTransfer(app, worker.token, advanceBody(worker, { ...attributes, preview }));
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(firstError(response).code, code, response.body);
  }
  const response = await postTransfer(app, worker.token, advanceBody(worker, attributes));
  return firstError(response).detail as string;
}

const INSTANT = { schedule: 'WITHIN_THIRTY_MINUTES' };
/** Bank transfers within thirty minutes at a fee, and no free option anywhere in the employer's schedule. */
const PAID_ONLY = {
  fee_bank_instant_minor: 300,
  fee_bank_next_day_minor: 100,
  fee_card_next_day_minor: 100,
  maximum_fee_minor: 999,
};

test('FEE_CAP_PER_ADVANCE: Connecticut caps a fee at 400, preview and advance alike', async (t) => {
  const { app, worker } = await setup(t, 'CT', { policy: { ...PAID_ONLY, fee_bank_instant_minor: 401 } });
  const detail = await refused(app, worker, { ...INSTANT, amount: 5000 }, 'MAXIMUM_FEE_EXCEEDED');
  assert.match(detail, /Connecticut allows a fee of at most 400/);
  assert.match(detail, /CT-FEE-CAP-ADVANCE, Conn\. Gen\. Stat\. 36a-555/);
  assert.equal((await advancesOf(app, worker)).length, 0);
  // The same employer's fee is fine for a New Yorker.
  await livesIn(app, worker, 'NY');
  assert.equal((await accepted(app, worker, { ...INSTANT, amount: 5000 })).fee, 401);
});

test('FEE_CAP_PER_ADVANCE: Maryland has two tiers, 500 up to 7,500 and 750 above', async (t) => {
  const { app, worker } = await setup(t, 'MD', { policy: { ...PAID_ONLY, fee_bank_instant_minor: 600 } });
  const detail = await refused(app, worker, { ...INSTANT, amount: 7500 }, 'MAXIMUM_FEE_EXCEEDED');
  assert.match(detail, /Maryland allows a fee of at most 500 on an advance of up to 7500/);
  assert.equal((await accepted(app, worker, { ...INSTANT, amount: 7501 })).fee, 600);
});

test('FEE_CAP_PER_MONTH: a lower monthly cap set by the operator, counted over the calendar month', async (t) => {
  const { app, worker, setClock } = await setup(t, 'CT', { policy: PAID_ONLY });
  const file = stateRules();
  // One advance with a fee a period would stop the second first: switched off to reach the monthly cap.
  await switchRule(app.database.db, file, 'CT-FEE-ADVANCES-PER-PERIOD', false, OPERATOR);
  await setRule(app.database.db, file, 'CT-FEE-CAP-MONTH', { params: { max_fees_minor: 700 } }, OPERATOR);
  assert.equal((await accepted(app, worker, { ...INSTANT, amount: 1000 })).fee, 300);
  assert.equal((await accepted(app, worker, { ...INSTANT, amount: 1100 })).fee, 300);
  const detail = await refused(app, worker, { ...INSTANT, amount: 1200 }, 'MAXIMUM_FEE_EXCEEDED');
  assert.match(
    detail,
    /at most 700 of fees in a calendar month; 600 were charged this month and this fee is 300/,
  );
  // A free advance (Connecticut's free option: the employer offers none) is never refused by a cap on fees.
  assert.equal((await accepted(app, worker, { amount: 1300 })).fee, 0);
  // The month is the employer's: 2026-04-01 03:59 UTC is still March 31 in New York, 04:00 is April.
  setClock(new Date('2026-04-01T03:59:00Z'));
  await refused(app, worker, { ...INSTANT, amount: 1400 }, 'MAXIMUM_FEE_EXCEEDED');
  setClock(new Date('2026-04-01T04:00:00Z'));
  assert.equal((await accepted(app, worker, { ...INSTANT, amount: 1500 })).fee, 300);
});

test('AMOUNT_LIMIT_PER_PERIOD: Connecticut, advances of a pay period below 75,000', async (t) => {
  const { app, worker } = await setup(t, 'CT', {
    policy: { maximum_transfer_minor: 100_000, daily_transfer_amount_max_minor: 1_000_000 },
    earnedMinor: 400_000,
  });
  await accepted(app, worker, { amount: 50_000 });
  const detail = await refused(app, worker, { amount: 25_000 }, 'TRANSFER_AMOUNT_LIMIT_EXCEEDED');
  assert.match(detail, /Connecticut allows advances of less than 75000 in a pay period; 50000 was advanced/);
  await accepted(app, worker, { amount: 24_999 });
});

test('FEE_BEARING_ADVANCES_PER_PERIOD: Connecticut, one advance with a fee a pay period; free ones go on', async (t) => {
  const { app, worker } = await setup(t, 'CT', { policy: { fee_bank_instant_minor: 300 } });
  assert.equal((await accepted(app, worker, { ...INSTANT, amount: 1000 })).fee, 300);
  const detail = await refused(app, worker, { ...INSTANT, amount: 1100 }, 'TRANSFER_LIMIT_EXCEEDED');
  assert.match(detail, /Connecticut allows at most one advance with a fee per pay period/);
  assert.match(detail, /CT-FEE-ADVANCES-PER-PERIOD/);
  assert.equal((await accepted(app, worker, { amount: 1200 })).fee, 0);
});

test('two advances with a fee at once in Connecticut: exactly one is made', async (t) => {
  const { app, worker } = await setup(t, 'CT', { policy: { fee_bank_instant_minor: 300 } });
  const answers = await Promise.all(
    [1000, 1100].map((amount) =>
      postTransfer(app, worker.token, advanceBody(worker, { ...INSTANT, amount })),
    ),
  );
  const statuses = answers.map((answer) => answer.statusCode).sort();
  assert.deepEqual(statuses, [200, 400], answers.map((answer) => answer.body).join('\n'));
  const refusal = answers.find((answer) => answer.statusCode === 400)!;
  assert.equal(firstError(refusal).code, 'TRANSFER_LIMIT_EXCEEDED');
  assert.equal((await advancesOf(app, worker)).length, 1);
});

test('FREE_OPTION_REQUIRED: in Wisconsin the next-day bank transfer is free when the employer offers nothing free', async (t) => {
  const { app, worker } = await setup(t, 'WI', { policy: PAID_ONLY });
  const preview = await accepted(app, worker, { amount: 2000, preview: true });
  assert.equal(preview.fee, 0);
  const made = await accepted(app, worker, { amount: 2000 });
  assert.equal(made.fee, 0);
  const rows = await app.database.db
    .selectFrom('transfers')
    .select('fee_minor')
    .where('person_id', '=', worker.personId)
    .where('origin_account_id', 'is not', null)
    .execute();
  assert.deepEqual(
    rows.map((row) => Number(row.fee_minor)),
    [0],
  );
  // The instant schedule keeps the employer's fee.
  assert.equal((await accepted(app, worker, { ...INSTANT, amount: 2100 })).fee, 300);
  // Not in New York.
  await livesIn(app, worker, 'NY');
  assert.equal((await accepted(app, worker, { amount: 2200 })).fee, 100);
});

test('FREE_OPTION_REQUIRED: offered even when the employer does not offer it, and not when a free option exists', async (t) => {
  const { app, worker } = await setup(t, 'SC', { policy: { ...PAID_ONLY, fee_bank_next_day_minor: null } });
  assert.equal((await accepted(app, worker, { amount: 2000, preview: true })).fee, 0);
  await livesIn(app, worker, 'NY');
  await refused(app, worker, { amount: 2000 }, 'INVALID_TRANSFER_SCHEDULE');
  // The employer's free card transfer is the free option: South Carolina asks for nothing more.
  const other = await setup(t, 'SC', { policy: { ...PAID_ONLY, fee_card_next_day_minor: 0 } });
  assert.equal((await accepted(other.app, other.worker, { amount: 2000, preview: true })).fee, 100);
});

test("FREE_OPTION_REQUIRED: the bank account's capabilities show the fee the advance charges", async (t) => {
  const { app, worker, setClock } = await setup(t, 'SC', {
    policy: { ...PAID_ONLY, fee_bank_next_day_minor: null },
  });
  const destinations = async () => {
    const response = await app.api.inject({
      url: `/rest/accounts/${worker.depositoryId}`,
      headers: { authorization: `Bearer ${worker.token}` },
    });
    assert.equal(response.statusCode, 200, response.body);
    return response.json().data.attributes.capabilities.transfer_destination;
  };
  const fee = (await accepted(app, worker, { amount: 2000, preview: true })).fee;
  assert.deepEqual(await destinations(), [
    { schedule: 'WITHIN_THIRTY_MINUTES', fee: 300, currency: 'USD' },
    { schedule: 'NEXT_BUSINESS_DAY', fee, currency: 'USD' },
  ]);
  assert.equal(fee, 0);
  // Elsewhere, and in South Carolina before its rule began, the employer's schedule as it is.
  await livesIn(app, worker, 'NY');
  assert.deepEqual(await destinations(), [{ schedule: 'WITHIN_THIRTY_MINUTES', fee: 300, currency: 'USD' }]);
  await livesIn(app, worker, 'SC');
  setClock(new Date('2024-11-20T15:00:00Z'));
  assert.deepEqual(await destinations(), [{ schedule: 'WITHIN_THIRTY_MINUTES', fee: 300, currency: 'USD' }]);
  // An operator who switches the rule off is followed at once.
  setClock(FIXED_NOW);
  await switchRule(app.database.db, stateRules(), 'SC-FREE-OPTION', false, OPERATOR);
  assert.deepEqual(await destinations(), [{ schedule: 'WITHIN_THIRTY_MINUTES', fee: 300, currency: 'USD' }]);
});

test("effective dates: Indiana's free option from 2026-01-01, on the employer's calendar day", async (t) => {
  const { app, worker, setClock } = await setup(t, 'IN', { policy: PAID_ONLY });
  // 2026-01-01 04:59 UTC is still 2025-12-31 in New York: the rule does not apply yet.
  setClock(new Date('2026-01-01T04:59:00Z'));
  assert.equal((await accepted(app, worker, { amount: 2000, preview: true })).fee, 100);
  setClock(new Date('2026-01-01T05:00:00Z'));
  assert.equal((await accepted(app, worker, { amount: 2000, preview: true })).fee, 0);
});

test('a counting rule an operator adds for a state the reads did not count for is applied at the next advance', async (t) => {
  const { app, worker } = await setup(t, 'NY', { policy: PAID_ONLY });
  // The process knows the rules (its reads count the fees of Connecticut's people only) ...
  assert.equal((await accepted(app, worker, { ...INSTANT, amount: 1000 })).fee, 300);
  // ... when New York gets a rule that counts: the advance reads again, counting, under the same lock.
  await setRule(
    app.database.db,
    stateRules(),
    'NY-FEE-ADVANCES-PER-PERIOD',
    {
      state: 'NY',
      kind: 'FEE_BEARING_ADVANCES_PER_PERIOD',
      params: { max_advances: 1 },
      effective_from: '2026-01-01',
      source: 'Operator decision',
    },
    OPERATOR,
  );
  await refused(app, worker, { ...INSTANT, amount: 1100 }, 'TRANSFER_LIMIT_EXCEEDED');
  await setRule(
    app.database.db,
    stateRules(),
    'NY-FEE-CAP-MONTH',
    {
      state: 'NY',
      kind: 'FEE_CAP_PER_MONTH',
      params: { max_fees_minor: 299 },
      effective_from: '2026-01-01',
      source: 'Operator decision',
    },
    OPERATOR,
  );
  await refused(app, worker, { ...INSTANT, amount: 1200 }, 'MAXIMUM_FEE_EXCEEDED');
});

test('NO_SERVICE: an operator rule from tomorrow does not apply today, and does from midnight', async (t) => {
  const { app, worker, setClock } = await setup(t, 'CT');
  await setRule(
    app.database.db,
    stateRules(),
    'CT-NO-SERVICE',
    {
      state: 'CT',
      kind: 'NO_SERVICE',
      params: { reason: 'Our small-loan licence is pending.' },
      effective_from: '2026-03-12',
      source: 'Operator decision 2026-03',
    },
    OPERATOR,
  );
  setClock(new Date('2026-03-12T03:59:00Z'));
  await accepted(app, worker, { amount: 1000, preview: true });
  setClock(new Date('2026-03-12T04:00:00Z'));
  const detail = await refused(app, worker, { amount: 1000 }, 'TRANSFERS_DISABLED');
  assert.match(detail, /not offered to residents of Connecticut: Our small-loan licence is pending\./);
  assert.match(detail, /CT-NO-SERVICE, Operator decision 2026-03/);
  // effective_until is the last day it applies.
  await setRule(app.database.db, stateRules(), 'CT-NO-SERVICE', { effective_until: '2026-03-12' }, OPERATOR);
  await refused(app, worker, { amount: 1000 }, 'TRANSFERS_DISABLED');
  setClock(new Date('2026-03-13T04:00:00Z'));
  await accepted(app, worker, { amount: 1000, preview: true });
});

test('overrides apply from the next advance: a lower cap, a rule switched off and on', async (t) => {
  const { app, worker } = await setup(t, 'CT', { policy: { fee_bank_instant_minor: 300 } });
  const { db } = app.database;
  const file = stateRules();
  await accepted(app, worker, { ...INSTANT, amount: 1000, preview: true });
  await setRule(db, file, 'CT-FEE-CAP-ADVANCE', { params: { tiers: [{ max_fee_minor: 250 }] } }, OPERATOR);
  const detail = await refused(app, worker, { ...INSTANT, amount: 1000 }, 'MAXIMUM_FEE_EXCEEDED');
  assert.match(detail, /at most 250/);
  await switchRule(db, file, 'CT-FEE-CAP-ADVANCE', false, OPERATOR);
  await accepted(app, worker, { ...INSTANT, amount: 1000, preview: true });
  await switchRule(db, file, 'CT-FEE-CAP-ADVANCE', true, OPERATOR);
  await refused(app, worker, { ...INSTANT, amount: 1000 }, 'MAXIMUM_FEE_EXCEEDED');
});

test('a person without a state is still MISSING_STATE_OF_RESIDENCE', async (t) => {
  const { app, worker } = await setup(t, 'CT');
  await app.database.db
    .updateTable('people')
    .set({ state_of_residence: null })
    .where('id', '=', worker.personId)
    .execute();
  await refused(app, worker, { amount: 1000 }, 'MISSING_STATE_OF_RESIDENCE');
});
