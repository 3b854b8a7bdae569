import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BASE_URL, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import { acceptDisclosures } from '../helpers/disclosures.ts';
import {
  advanceBody,
  createPaidWorker,
  firstError,
  type PaidWorker,
  postTransfer,
  recordShift,
} from '../helpers/money.ts';
import { operatorApp } from '../helpers/operator.ts';

/**
 * The regulators' per-state report checked against the advances it counts: advances made through the REST API in
 * two states, one failed by the rail, a person who moves between two advances, complaints inside and outside the
 * period, and the period's boundaries at the last and first instant of a quarter and a year (UTC).
 */

async function moveTo(app: TestApp, worker: PaidWorker, state: string) {
  await app.database.db
    .updateTable('people')
    .set({ state_of_residence: state })
    .where('id', '=', worker.personId)
    .execute();
}

async function advance(app: TestApp, worker: PaidWorker, attributes: Record<string, unknown>) {
  const answer = await postTransfer(app, worker.token, advanceBody(worker, attributes));
  assert.equal(answer.statusCode, 200, answer.body);
  return answer.json().data as { id: string; attributes: { fee: number; status: string } };
}

const complaint = (organizationId: string, attributes: Record<string, unknown>) => ({
  data: {
    type: 'complaints',
    attributes: {
      organization_id: organizationId,
      channel: 'PHONE',
      summary: 'Fee not expected.',
      ...attributes,
    },
  },
});

test('the state report counts what the advances and complaints were, by the state of each when made', async (t) => {
  const { app, clock, call } = await operatorApp(t);
  const policy = { fee_bank_instant_minor: 300 };
  const alex = await createPaidWorker(app, { policy, earnedMinor: 40_000, now: FIXED_NOW });
  const blair = await createPaidWorker(app, {
    organizationId: alex.organizationId,
    earnedMinor: 40_000,
    now: FIXED_NOW,
  });
  await moveTo(app, alex, 'WI');
  await moveTo(app, blair, 'MN');
  await acceptDisclosures(alex);
  await acceptDisclosures(blair);

  // Complaints of WI: one the last instant of 2025, one the first of 2026, one of Alex (in WI then).
  clock.now = new Date('2025-12-31T23:59:59.999Z');
  const before = await call('POST', '/admin/complaints', complaint(alex.organizationId, { state: 'WI' }));
  assert.equal(before.statusCode, 201, before.body);
  clock.now = new Date('2026-01-01T00:00:00.000Z');
  const newYear = await call('POST', '/admin/complaints', complaint(alex.organizationId, { state: 'WI' }));
  assert.equal(newYear.statusCode, 201, newYear.body);
  clock.now = FIXED_NOW;
  const ofAlex = await call(
    'POST',
    '/admin/complaints',
    complaint(alex.organizationId, { person_id: alex.personId }),
  );
  assert.equal(ofAlex.statusCode, 201, ofAlex.body);
  assert.equal(ofAlex.json().data.attributes.state, 'WI');
  const answered = await call('PATCH', `/admin/complaints/${newYear.json().data.id}`, {
    data: { type: 'complaints', attributes: { status: 'ANSWERED', answer: 'The fee was shown before.' } },
  });
  assert.equal(answered.statusCode, 200, answered.body);

  // Alex, in WI: 1,000 next day (no fee), 2,000 within thirty minutes (fee 300), and 1,313, which the rail fails.
  assert.equal((await advance(app, alex, { amount: 1000 })).attributes.fee, 0);
  assert.equal(
    (await advance(app, alex, { amount: 2000, schedule: 'WITHIN_THIRTY_MINUTES' })).attributes.fee,
    300,
  );
  const failing = await advance(app, alex, { amount: 1313 });
  // Blair, in MN: 1,500 within thirty minutes (fee 300).
  await advance(app, blair, { amount: 1500, schedule: 'WITHIN_THIRTY_MINUTES' });
  clock.now = new Date('2026-03-12T14:00:00Z');
  await app.money.settle(clock.now);
  const failed = await app.database.db
    .selectFrom('transfers')
    .select('status')
    .where('id', '=', failing.id)
    .executeTakeFirstOrThrow();
  assert.equal(failed.status, 'FAILED');
  // Alex moves to MN and takes 2,500 there.
  await moveTo(app, alex, 'MN');
  await acceptDisclosures(alex);
  await advance(app, alex, { amount: 2500 });
  // Closed on the first instant of the second quarter: outside the first quarter's figures. (The tokens of this
  // test are valid until an hour after the real time: the clock stays before it.)
  clock.now = new Date('2026-04-01T00:00:00.000Z');
  const closed = await call('PATCH', `/admin/complaints/${newYear.json().data.id}`, {
    data: { type: 'complaints', attributes: { status: 'CLOSED', resolution: 'Explained; no refund due.' } },
  });
  assert.equal(closed.statusCode, 200, closed.body);

  const report = async (query: string) => {
    const answer = await call('GET', `/admin/reports/state?${query}`);
    assert.equal(answer.statusCode, 200, answer.body);
    return answer.json().data.attributes;
  };
  const wi = await report('filter[state]=WI&filter[year]=2026&filter[quarter]=1');
  assert.deepEqual(
    {
      advances: wi.advances,
      unique_users: wi.unique_users,
      failed_advances: wi.failed_advances,
      returned_advances: wi.returned_advances,
      users_with_12_or_more_advances: wi.users_with_12_or_more_advances,
      complaints: [wi.complaints_opened, wi.complaints_answered, wi.complaints_closed],
      advances_by_current_state: wi.advances_by_current_state,
    },
    {
      advances: 2,
      unique_users: 1,
      failed_advances: 1,
      returned_advances: 0,
      users_with_12_or_more_advances: 0,
      complaints: [2, 1, 0],
      advances_by_current_state: 0,
    },
  );
  assert.deepEqual(wi.amounts, [
    {
      currency: 'USD',
      total_amount: 3000,
      total_fees: 300,
      total_tips: 0,
      amount_received: 2700,
      failed_amount: 1313,
      returned_amount: 0,
    },
  ]);
  assert.deepEqual(wi.period, { from: '2026-01-01', to: '2026-03-31', time_zone: 'UTC' });

  const mn = await report('filter[state]=MN&filter[year]=2026&filter[quarter]=1');
  assert.equal(mn.advances, 2);
  assert.equal(mn.unique_users, 2);
  assert.equal(mn.amounts[0].total_amount, 4000);
  assert.equal(mn.amounts[0].total_fees, 300);
  assert.equal(mn.failed_advances, 0);
  assert.deepEqual([mn.complaints_opened, mn.complaints_answered, mn.complaints_closed], [0, 0, 0]);

  // The complaint closed on the first instant of the second quarter counts there; the one of 2025's last instant
  // in 2025.
  const q2 = await report('filter[state]=WI&filter[year]=2026&filter[quarter]=2');
  assert.deepEqual(
    [q2.complaints_opened, q2.complaints_answered, q2.complaints_closed, q2.advances],
    [0, 0, 1, 0],
  );
  const year = await report('filter[state]=WI&filter[year]=2026');
  assert.deepEqual([year.complaints_opened, year.complaints_answered, year.complaints_closed], [2, 1, 1]);
  const wi2025 = await report('filter[state]=WI&filter[from]=2025-12-31&filter[to]=2025-12-31');
  assert.equal(wi2025.complaints_opened, 1);
  assert.equal((await report('filter[state]=WI&filter[year]=2025')).complaints_opened, 1);
  assert.equal((await report('filter[state]=WI&filter[year]=2026&filter[half]=1')).advances, 2);

  // An advance made before the state was recorded with each advance counts at the person's state now, and says so.
  await app.database.db
    .updateTable('transfer_disclosures')
    .set({ state_of_residence: null })
    .where('transfer_id', 'in', (eb) =>
      eb
        .selectFrom('transfers')
        .select('id')
        .where('person_id', '=', alex.personId)
        .where('amount_minor', '=', 1000),
    )
    .execute();
  const wiAfter = await report('filter[state]=WI&filter[year]=2026');
  const mnAfter = await report('filter[state]=MN&filter[year]=2026');
  assert.equal(wiAfter.advances, 1);
  assert.equal(mnAfter.advances, 3);
  assert.equal(mnAfter.advances_by_current_state, 1);
  assert.ok(mnAfter.notes.some((note: string) => note.includes("person's current state")));

  const csv = await call(
    'GET',
    '/admin/reports/state.csv?filter[state]=WI&filter[year]=2026',
    undefined,
    'text/csv',
  );
  assert.equal(csv.statusCode, 200, csv.body);
  assert.match(String(csv.headers['content-type']), /^text\/csv/);
  const [header, line, end] = csv.body.split('\r\n');
  assert.equal(end, '');
  const row = Object.fromEntries(header!.split(',').map((name, i) => [name, line!.split(',')[i]]));
  assert.equal(row.state, 'WI');
  assert.equal(row.advances, '1');
  assert.equal(row.total_amount_minor, '2000');
  assert.equal(row.total_fees_minor, '300');
  assert.equal(row.failed_advances, '1');
  assert.equal(row.complaints_opened, '2');
});

test('a person with twelve advances in the period is counted by users_with_12_or_more_advances (NV)', async (t) => {
  const { app, call } = await operatorApp(t);
  const policy = { daily_transfer_count_max: 100 };
  const often = await createPaidWorker(app, { policy, earnedMinor: 40_000, now: FIXED_NOW });
  const eleven = await createPaidWorker(app, {
    organizationId: often.organizationId,
    earnedMinor: 40_000,
    now: FIXED_NOW,
  });
  for (const worker of [often, eleven]) {
    await moveTo(app, worker, 'NV');
    await acceptDisclosures(worker);
  }
  for (let i = 0; i < 12; i++) await advance(app, often, { amount: 500 + i });
  for (let i = 0; i < 11; i++) await advance(app, eleven, { amount: 600 + i });
  const answer = await call(
    'GET',
    '/admin/reports/state?filter[state]=NV&filter[year]=2026&filter[quarter]=1',
  );
  assert.equal(answer.statusCode, 200, answer.body);
  const nv = answer.json().data.attributes;
  assert.equal(nv.advances, 23);
  assert.equal(nv.unique_users, 2);
  assert.equal(nv.users_with_12_or_more_advances, 1);
});

test('the period is UTC days: the last instant of a quarter and of a year, and the first of the next', async (t) => {
  // The tests of a file share its database: each counts a state of its own.
  const { app, clock, call } = await operatorApp(t);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  await moveTo(app, worker, 'KS');
  await acceptDisclosures(worker);
  const at = async (instant: string, amount: number) => {
    clock.now = new Date(instant);
    await advance(app, worker, { amount });
  };
  clock.now = new Date('2026-03-31T20:00:00Z');
  await recordShift(app, worker.jobId, 40_000, clock.now);
  await at('2026-03-31T23:59:59.999Z', 1001);
  await at('2026-04-01T00:00:00.000Z', 1002);
  // The year's boundary: 2025 into 2026 (the tokens of the test are valid until an hour after the real time).
  clock.now = new Date('2025-12-31T20:00:00Z');
  await recordShift(app, worker.jobId, 40_000, clock.now);
  await at('2025-12-31T23:59:59.999Z', 1003);
  await at('2026-01-01T00:00:00.000Z', 1004);
  const amountOf = async (query: string) => {
    const answer = await call('GET', `/admin/reports/state?filter[state]=KS&${query}`);
    assert.equal(answer.statusCode, 200, answer.body);
    return answer.json().data.attributes.amounts[0]?.total_amount ?? 0;
  };
  assert.equal(await amountOf('filter[year]=2026&filter[quarter]=1'), 1001 + 1004);
  assert.equal(await amountOf('filter[year]=2026&filter[quarter]=2'), 1002);
  assert.equal(await amountOf('filter[year]=2025&filter[quarter]=4'), 1003);
  assert.equal(await amountOf('filter[year]=2025&filter[half]=2'), 1003);
  assert.equal(await amountOf('filter[year]=2025'), 1003);
  assert.equal(await amountOf('filter[year]=2026'), 1001 + 1002 + 1004);
  assert.equal(await amountOf('filter[from]=2025-12-31&filter[to]=2025-12-31'), 1003);
  assert.equal(await amountOf('filter[from]=2026-01-01&filter[to]=2026-01-01'), 1004);
  assert.equal(await amountOf('filter[from]=2026-03-31&filter[to]=2026-04-01'), 1001 + 1002);
  assert.equal(await amountOf('filter[from]=2026-04-01&filter[to]=2026-04-30'), 1002);
});

test('bad input to the reports is 400 naming the parameter, never 500', async (t) => {
  const { call } = await operatorApp(t);
  const cases: [string, string, RegExp][] = [
    ['/admin/reports/state?filter[state]=XX&filter[year]=2026', 'filter[state]', /two-letter code/],
    ['/admin/reports/state?filter[year]=2026', 'filter[state]', /^filter\[state\] is required/],
    ['/admin/reports/state?filter[state]=WI&filter[year]=26x', 'filter[year]', /whole number from 2000/],
    ['/admin/reports/state?filter[state]=WI', 'filter[year]', /^filter\[year\] is required/],
    [
      '/admin/reports/state?filter[state]=WI&filter[year]=2026&filter[quarter]=5',
      'filter[quarter]',
      /1 to 4/,
    ],
    [
      '/admin/reports/state?filter[state]=WI&filter[from]=2026-02-01&filter[to]=2026-01-31',
      'filter[from]',
      /must not be after/,
    ],
    [
      '/admin/reports/state?filter[state]=WI&filter[from]=2026-02-30&filter[to]=2026-03-01',
      'filter[from]',
      /calendar day/,
    ],
    [
      '/admin/reports/state?filter[state]=WI&filter[year]=2026&filter[from]=2026-01-01&filter[to]=2026-01-02',
      'filter[year]',
      /not both/,
    ],
    [
      '/admin/reports/remittance?filter[pay_date]=2026-03-20',
      'filter[organization]',
      /^filter\[organization\] is required/,
    ],
    [
      '/admin/reports/remittance?filter[organization]=6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0009&filter[pay_date]=2026-03-20',
      'filter[organization]',
      /No organization has the id/,
    ],
    [
      '/admin/reports/remittance?filter[organization]=6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0009&filter[pay_date]=20260320',
      'filter[pay_date]',
      /^filter\[pay_date\] must be a calendar day/,
    ],
    [
      '/admin/reports/remittance?filter[organization]=nope&filter[pay_date]=2026-03-20',
      'filter[organization]',
      /UUID/,
    ],
    ['/admin/reports/state.csv?filter[state]=wi&filter[year]=2026', 'filter[state]', /two-letter code/],
  ];
  for (const [url, parameter, detail] of cases) {
    const answer = await call('GET', url, undefined, url.includes('.csv') ? 'text/csv' : undefined);
    assert.equal(answer.statusCode, 400, `${url}: ${answer.body}`);
    const error = firstError(answer);
    assert.equal(error.code, 'INVALID_PARAMETERS', url);
    assert.deepEqual(error.source, { parameter }, url);
    assert.match(error.detail, detail, url);
  }
  assert.equal((await call('GET', '/admin/reports/state?filter[nope]=1')).statusCode, 400);
  assert.ok(BASE_URL);
});
