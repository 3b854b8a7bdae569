import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { buildTestApp, FIXED_NOW } from '../helpers/build-test-app.ts';
import { linkedClientToken, restClient } from '../helpers/factories.ts';
import {
  addCardAccount,
  advanceBody,
  availableMinor,
  createPaidWorker,
  firstError,
  moneyFootprint,
  postTransfer,
  recordShift,
} from '../helpers/money.ts';

test('an advance moves available earnings to the bank account, with its funding and fee', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const balance = await worker.api.get(`/rest/accounts/${worker.balanceAccountId}`);
  assert.equal(balance.json().data.attributes.balances.available, 15_000);
  const response = await postTransfer(
    app,
    worker.token,
    advanceBody(worker, { amount: 6000 }),
    undefined,
    '?include=estimated_funding_sources',
  );
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  assert.equal(body.data.attributes.status, 'PENDING');
  assert.equal(body.included.length, 1);
  const after = await worker.api.get(`/rest/accounts/${worker.balanceAccountId}`);
  assert.equal(after.json().data.attributes.balances.available, 9000);
  const list = await worker.api.get('/rest/transfers');
  assert.equal(list.statusCode, 200, list.body);
  assert.equal(list.json().data.length, 2);
  const paychecks = await worker.api.get('/rest/paychecks');
  assert.equal(paychecks.json().data[0].attributes.total_debited, 6000);
});

test('the books balance after earnings and an advance', async (t) => {
  const { checkLedgerInvariants } = await import('../../src/ledger/invariants.ts');
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const response = await postTransfer(app, worker.token, advanceBody(worker, { amount: 6000 }));
  assert.equal(response.statusCode, 200, response.body);
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});

interface Included {
  type: string;
  id: string;
  attributes: { amount: number; currency: string };
  relationships: { source: { data: { id: string } }; transfer: { data: { id: string } } };
}

/** Paycheck id → amount of the included funding sources of one transfer. */
function fundingOf(included: Included[] | undefined, transferId: string) {
  return Object.fromEntries(
    (included ?? [])
      .filter((source) => source.relationships.transfer.data.id === transferId)
      .map((source) => [source.relationships.source.data.id, source.attributes.amount]),
  );
}

/** An app whose clock the test moves: set `clock.now`. */
async function movingClockApp(t: Parameters<typeof buildTestApp>[0], start = FIXED_NOW) {
  const clock = { now: start };
  return { clock, app: await buildTestApp(t, {}, { now: () => clock.now }) };
}

test('preview: the fee and the estimated funding, and nothing created', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const card = await addCardAccount(app, worker, FIXED_NOW);
  const before = await moneyFootprint(app, worker);
  const listBefore = (await worker.api.get('/rest/transfers')).body;
  const body = advanceBody(
    { ...worker, depositoryId: card },
    { amount: 5000, schedule: 'WITHIN_THIRTY_MINUTES', preview: true },
  );
  const preview = await postTransfer(
    app,
    worker.token,
    body,
    undefined,
    '?include=estimated_funding_sources',
  );
  assert.equal(preview.statusCode, 200, preview.body);
  const { data, included } = preview.json();
  assert.equal(data.attributes.preview, true);
  assert.match(data.meta.preview, /^Nothing was created/, 'the answer says that it created nothing');
  // The published description requires links.self on every transfer: a preview keeps it, and meta says why it leads
  // nowhere (the included funding sources have no links at all).
  assert.equal(typeof data.links.self, 'string');
  for (const source of included) assert.equal(source.links, undefined);
  assert.equal(data.attributes.fee, 299);
  assert.equal(data.attributes.amount, 5000);
  assert.equal(data.attributes.status, 'PENDING');
  const [paycheck] = (await worker.api.get('/rest/paychecks')).json().data;
  assert.deepEqual(fundingOf(included, data.id), { [paycheck.id]: 5000 });
  assert.equal(data.relationships.estimated_funding_sources.data.length, 1);
  assert.deepEqual(await moneyFootprint(app, worker), before);
  assert.equal((await worker.api.get('/rest/transfers')).body, listBefore);
  assert.equal((await worker.api.get(`/rest/transfers/${data.id}`)).statusCode, 404);
  assert.equal((await worker.api.get('/rest/paychecks')).json().data[0].attributes.total_debited, 0);
  // A preview is no advance: the same one for real is neither a duplicate nor over a limit.
  const real = await postTransfer(
    app,
    worker.token,
    advanceBody(
      { ...worker, depositoryId: card },
      {
        amount: 5000,
        schedule: 'WITHIN_THIRTY_MINUTES',
      },
    ),
  );
  assert.equal(real.statusCode, 200, real.body);
  assert.equal(real.json().data.attributes.preview, false);
  assert.equal(real.json().data.meta, undefined, 'a transfer made has no preview note');
  assert.equal(real.json().data.attributes.fee, 299);
  // A preview refused is refused as the real one would be.
  const refused = await postTransfer(
    app,
    worker.token,
    advanceBody(worker, { amount: 10_001, preview: true }),
  );
  assert.equal(firstError(refused).code, 'EARNINGS_BALANCE_EXCEEDED');
});

test("the client's id is the transfer's; a used id is refused, for a preview too", async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const id: string = randomUUID();
  const withId = (attributes: Record<string, unknown>, transferId = id) => {
    const body = advanceBody(worker, attributes);
    return { data: { ...body.data, id: transferId } };
  };
  const created = await postTransfer(app, worker.token, withId({ amount: 5000 }, id.toUpperCase()));
  assert.equal(created.statusCode, 200, created.body);
  assert.equal(created.json().data.id, id);
  assert.equal((await worker.api.get(`/rest/transfers/${id}`)).json().data.attributes.amount, 5000);
  const other = await createPaidWorker(app, {
    organizationId: worker.organizationId,
    earnedMinor: 40_000,
    now: FIXED_NOW,
  });
  const before = await moneyFootprint(app, worker);
  for (const attributes of [{ amount: 6000 }, { amount: 6000, preview: true }]) {
    const reused = await postTransfer(app, worker.token, withId(attributes));
    assert.equal(reused.statusCode, 400, reused.body);
    assert.equal(firstError(reused).code, 'INVALID_PARAMETERS');
    assert.deepEqual(firstError(reused).source, { pointer: '/data/id' });
  }
  // Another person's transfer id is as used as one's own.
  const theirs = await postTransfer(app, other.token, {
    data: { ...advanceBody(other, { amount: 5000 }).data, id },
  });
  assert.equal(firstError(theirs).code, 'INVALID_PARAMETERS');
  assert.deepEqual(await moneyFootprint(app, worker), before);
});

test('include=estimated_funding_sources,final_funding_sources on POST, GET one and GET list', async (t) => {
  const { clock, app } = await movingClockApp(t);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const include = '?include=estimated_funding_sources,final_funding_sources';
  const posted = await postTransfer(
    app,
    worker.token,
    advanceBody(worker, { amount: 6000 }),
    undefined,
    include,
  );
  assert.equal(posted.statusCode, 200, posted.body);
  const { data, included } = posted.json();
  const [paycheck] = (await worker.api.get('/rest/paychecks')).json().data;
  assert.equal(included.length, 1);
  assert.deepEqual(included[0].attributes, { amount: 6000, currency: 'USD' });
  assert.deepEqual(included[0].relationships.source.data, { type: 'paychecks', id: paycheck.id });
  assert.deepEqual(included[0].relationships.transfer.data, { type: 'transfers', id: data.id });
  assert.deepEqual(data.relationships.estimated_funding_sources.data, [
    { type: 'funding_sources', id: included[0].id },
  ]);
  assert.deepEqual(data.relationships.final_funding_sources.data, []);
  // Without include there is no included, but the relationships still name the sources.
  const plain = await worker.api.get(`/rest/transfers/${data.id}`);
  assert.equal(plain.json().included, undefined);
  assert.deepEqual(plain.json().data.relationships, data.relationships);
  // Settled on Thursday 09:00 New York: the final funding is the estimated one.
  clock.now = new Date('2026-03-12T13:00:00Z');
  await app.money.settle(clock.now);
  const one = await worker.api.get(`/rest/transfers/${data.id}${include}`);
  assert.equal(one.statusCode, 200, one.body);
  assert.equal(one.json().data.attributes.status, 'SETTLED');
  const stages = one.json().data.relationships;
  assert.equal(stages.estimated_funding_sources.data.length, 1);
  assert.equal(stages.final_funding_sources.data.length, 1);
  assert.notEqual(stages.final_funding_sources.data[0].id, stages.estimated_funding_sources.data[0].id);
  assert.equal(one.json().included.length, 2);
  for (const source of one.json().included)
    assert.deepEqual(source.attributes, { amount: 6000, currency: 'USD' });
  const onlyFinal = await worker.api.get(`/rest/transfers/${data.id}?include=final_funding_sources`);
  assert.deepEqual(
    onlyFinal.json().included.map((source: Included) => source.id),
    [stages.final_funding_sources.data[0].id],
  );
  const list = await worker.api.get(`/rest/transfers${include}`);
  assert.equal(list.statusCode, 200, list.body);
  const listed = list.json();
  // The earnings credit (a paycheck-origin transfer) has no funding sources; the advance has two.
  assert.equal(listed.data.length, 2);
  const credit = listed.data.find((transfer: { id: string }) => transfer.id !== data.id);
  assert.deepEqual(credit.relationships.origin.data, { type: 'paychecks', id: paycheck.id });
  assert.deepEqual(credit.relationships.estimated_funding_sources.data, []);
  assert.equal(listed.included.length, 2);
  const bad = await worker.api.get('/rest/transfers?include=paychecks');
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(firstError(bad).source, { parameter: 'include' });
});

test('an advance spanning two paychecks is funded oldest first, the amounts split', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  // A shift of the previous period (16 February – 1 March), recorded late: 7 500 more available.
  await recordShift(app, worker.jobId, 20_000, FIXED_NOW, '2026-02-20');
  assert.equal(await availableMinor(worker), 22_500);
  const response = await postTransfer(
    app,
    worker.token,
    advanceBody(worker, { amount: 10_000 }),
    undefined,
    '?include=estimated_funding_sources',
  );
  assert.equal(response.statusCode, 200, response.body);
  const [february, march] = (
    (await worker.api.get('/rest/paychecks')).json().data as {
      id: string;
      attributes: { pay_period_starts_at: string; total_debited: number };
    }[]
  ).sort((a, b) => a.attributes.pay_period_starts_at.localeCompare(b.attributes.pay_period_starts_at));
  assert.equal(february!.attributes.pay_period_starts_at, '2026-02-16T05:00:00.000Z');
  assert.deepEqual(fundingOf(response.json().included, response.json().data.id), {
    [february!.id]: 7500,
    [march!.id]: 2500,
  });
  assert.equal(february!.attributes.total_debited, 7500);
  assert.equal(march!.attributes.total_debited, 2500);
  // The next advance comes from March alone.
  const next = await postTransfer(
    app,
    worker.token,
    advanceBody(worker, { amount: 1000 }),
    undefined,
    '?include=estimated_funding_sources',
  );
  assert.deepEqual(fundingOf(next.json().included, next.json().data.id), { [march!.id]: 1000 });
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});

test('filter[submitted_at__gt] lists the transfers submitted after an instant', async (t) => {
  const { clock, app } = await movingClockApp(t);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const first = await postTransfer(app, worker.token, advanceBody(worker, { amount: 1000 }));
  clock.now = new Date(FIXED_NOW.getTime() + 3_600_000);
  const second = await postTransfer(app, worker.token, advanceBody(worker, { amount: 1000 }));
  assert.equal(second.statusCode, 200, second.body);
  const after = (instant: string) =>
    worker.api.get(`/rest/transfers?filter[submitted_at__gt]=${encodeURIComponent(instant)}`);
  const later = await after(FIXED_NOW.toISOString());
  assert.equal(later.statusCode, 200, later.body);
  assert.deepEqual(
    later.json().data.map((transfer: { id: string }) => transfer.id),
    [second.json().data.id],
  );
  const all = await after('2026-03-11T15:29:59Z');
  assert.deepEqual(all.json().data.length, 3);
  assert.ok(all.json().data.some((transfer: { id: string }) => transfer.id === first.json().data.id));
  const bad = await after('yesterday');
  assert.equal(bad.statusCode, 400, bad.body);
});

test('the free-form filter matches submitted_at exactly as the API writes it, and the same instant in any offset', async (t) => {
  const { clock, app } = await movingClockApp(t, new Date(FIXED_NOW.getTime() + 250));
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const first = await postTransfer(app, worker.token, advanceBody(worker, { amount: 1000 }));
  clock.now = new Date(FIXED_NOW.getTime() + 3_600_000);
  const second = await postTransfer(app, worker.token, advanceBody(worker, { amount: 1000 }));
  assert.equal(second.statusCode, 200, second.body);
  const submitted: string = first.json().data.attributes.submitted_at;
  const ids = async (filter: string) => {
    const response = await worker.api.get(`/rest/transfers?filter=${encodeURIComponent(filter)}`);
    assert.equal(response.statusCode, 200, response.body);
    return response.json().data.map((transfer: { id: string }) => transfer.id);
  };
  const inNewYork = `${new Date(Date.parse(submitted) - 5 * 3_600_000).toISOString().slice(0, -1)}-05:00`;
  assert.deepEqual(await ids(`submitted_at:"${submitted}"`), [first.json().data.id]);
  assert.deepEqual(await ids(`submitted_at:"${inNewYork}"`), [first.json().data.id], inNewYork);
  assert.deepEqual(
    await ids(`submitted_at:"${submitted}" OR submitted_at:"${second.json().data.attributes.submitted_at}"`),
    [first.json().data.id, second.json().data.id],
  );
  assert.deepEqual(await ids(`submitted_at:"${submitted.replace('.250Z', '.251Z')}"`), []);
  const bad = await worker.api.get(
    `/rest/transfers?filter=${encodeURIComponent('submitted_at:"2026-03-11"')}`,
  );
  assert.equal(bad.statusCode, 400, bad.body);
  assert.equal(firstError(bad).code, 'INVALID_FILTER_VALUE');
  assert.equal(firstError(bad).source?.parameter, 'filter');
});

test('filter[submitted_at__gt] refuses a day not on the calendar and a bare date instead of moving to another day, and takes every RFC 3339 form', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const after = (instant: string) =>
    worker.api.get(`/rest/transfers?filter[submitted_at__gt]=${encodeURIComponent(instant)}`);
  // Date reads 2026-02-30 as 2 March and 2026-11-31 as 1 December; a bare date has no offset, as the message says.
  for (const value of [
    '2026-02-30T00:00:00Z',
    '2026-11-31T00:00:00Z',
    '2027-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-03-01T24:00:00Z',
    '2026-03-01T12:30:60Z',
    '2026-11-22',
    '2026-11-22T00:00:00',
  ]) {
    const response = await after(value);
    assert.equal(response.statusCode, 400, `${value}: ${response.body}`);
    assert.equal(firstError(response).code, 'INVALID_FILTER_VALUE', value);
    assert.equal(firstError(response).source?.parameter, 'filter[submitted_at__gt]', value);
  }
  for (const value of [
    '2028-02-29T00:00:00Z',
    '2026-11-30T23:59:59.123456+05:30',
    '2026-11-30T00:00:00-0500',
    '2026-11-30t00:00:00z',
    '2016-12-31T23:59:60Z',
  ])
    assert.equal((await after(value)).statusCode, 200, value);
});

test("another person's transfer and a malformed id are 404; a client token is 403", async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const other = await createPaidWorker(app, {
    organizationId: worker.organizationId,
    earnedMinor: 40_000,
    now: FIXED_NOW,
  });
  const theirs = await postTransfer(app, other.token, advanceBody(other));
  assert.equal(theirs.statusCode, 200, theirs.body);
  for (const id of [theirs.json().data.id, 'not-a-uuid', randomUUID()]) {
    const response = await worker.api.get(`/rest/transfers/${id}`);
    assert.equal(response.statusCode, 404, id);
    assert.equal(firstError(response).code, 'RECORD_NOT_FOUND');
  }
  assert.ok(!(await worker.api.get('/rest/transfers')).body.includes(theirs.json().data.id));
  const { token } = await linkedClientToken(app, [worker.organizationId], ['client:lookup', 'client:admin']);
  const client = restClient(app, token);
  for (const response of [
    await client.get('/rest/transfers'),
    await client.get(`/rest/transfers/${theirs.json().data.id}`),
    await postTransfer(app, token, advanceBody(worker)),
  ]) {
    assert.equal(response.statusCode, 403, response.body);
    assert.equal(firstError(response).code, 'FORBIDDEN');
  }
});

test('NEXT_BUSINESS_DAY on a Friday: PENDING over the weekend, SETTLED on Monday 09:00 New York', async (t) => {
  const friday = new Date('2026-03-13T15:00:00Z');
  const { clock, app } = await movingClockApp(t, friday);
  const settle = (at: string) => {
    clock.now = new Date(at);
    return app.money.settle(clock.now);
  };
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: friday });
  const posted = await postTransfer(app, worker.token, advanceBody(worker, { amount: 6000 }));
  assert.equal(posted.statusCode, 200, posted.body);
  const url = `/rest/transfers/${posted.json().data.id}?include=final_funding_sources`;
  const read = async () => (await worker.api.get(url)).json();
  await settle('2026-03-14T15:00:00Z');
  assert.equal((await read()).data.attributes.status, 'PENDING');
  // 08:59:59 on Monday in New York (EDT since 8 March): not yet.
  await settle('2026-03-16T12:59:59Z');
  assert.equal((await read()).data.attributes.status, 'PENDING');
  assert.equal((await read()).data.attributes.resolved_at, null);
  await settle('2026-03-16T13:00:00Z');
  const settled = await read();
  assert.equal(settled.data.attributes.status, 'SETTLED');
  assert.equal(settled.data.attributes.resolved_at, '2026-03-16T13:00:00.000Z');
  assert.equal(settled.data.relationships.final_funding_sources.data.length, 1);
  assert.deepEqual(settled.included[0].attributes, { amount: 6000, currency: 'USD' });
  assert.equal(await availableMinor(worker), 9000);
  // Settling again changes nothing.
  const entries = (await moneyFootprint(app, worker)).ledgerEntries;
  await settle('2026-03-16T14:00:00Z');
  assert.equal((await moneyFootprint(app, worker)).ledgerEntries, entries);
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});

test('the sandbox amount 1313 fails: amount and fee back in the balance, the paycheck debited no more', async (t) => {
  const { clock, app } = await movingClockApp(t);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const card = await addCardAccount(app, worker, FIXED_NOW);
  const posted = await postTransfer(
    app,
    worker.token,
    advanceBody({ ...worker, depositoryId: card }, { amount: 1313, schedule: 'WITHIN_THIRTY_MINUTES' }),
  );
  assert.equal(posted.statusCode, 200, posted.body);
  assert.equal(posted.json().data.attributes.fee, 299);
  assert.equal(await availableMinor(worker), 15_000 - 1313);
  const paycheck = async () => (await worker.api.get('/rest/paychecks')).json().data[0].attributes;
  assert.equal((await paycheck()).total_debited, 1313);
  clock.now = new Date(FIXED_NOW.getTime() + 119_000);
  await app.money.settle(clock.now);
  assert.equal(
    (await worker.api.get(`/rest/transfers/${posted.json().data.id}`)).json().data.attributes.status,
    'PENDING',
  );
  clock.now = new Date(FIXED_NOW.getTime() + 120_000);
  await app.money.settle(clock.now);
  const failed = (
    await worker.api.get(
      `/rest/transfers/${posted.json().data.id}?include=estimated_funding_sources,final_funding_sources`,
    )
  ).json();
  assert.equal(failed.data.attributes.status, 'FAILED');
  assert.equal(failed.data.attributes.resolved_at, clock.now.toISOString());
  assert.deepEqual(failed.data.relationships.final_funding_sources.data, []);
  assert.equal(failed.included.length, 1);
  assert.equal(await availableMinor(worker), 15_000);
  assert.equal((await paycheck()).total_debited, 0);
  // The money is there to take again.
  const again = await postTransfer(app, worker.token, advanceBody(worker, { amount: 15_000 }));
  assert.equal(again.statusCode, 200, again.body);
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});

test('a card advance WITHIN_THIRTY_MINUTES costs 299 and settles two minutes later', async (t) => {
  const { clock, app } = await movingClockApp(t);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const card = await addCardAccount(app, worker, FIXED_NOW);
  const posted = await postTransfer(
    app,
    worker.token,
    advanceBody({ ...worker, depositoryId: card }, { amount: 5000, schedule: 'WITHIN_THIRTY_MINUTES' }),
  );
  assert.equal(posted.statusCode, 200, posted.body);
  assert.equal(posted.json().data.attributes.fee, 299);
  assert.deepEqual(posted.json().data.relationships.destination.data, { type: 'accounts', id: card });
  assert.equal(await availableMinor(worker), 10_000);
  clock.now = new Date(FIXED_NOW.getTime() + 120_000);
  await app.money.settle(clock.now);
  const settled = (await worker.api.get(`/rest/transfers/${posted.json().data.id}`)).json().data;
  assert.equal(settled.attributes.status, 'SETTLED');
  assert.equal(settled.attributes.resolved_at, '2026-03-11T15:32:00.000Z');
  assert.equal(await availableMinor(worker), 10_000);
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});
