import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FIXED_NOW } from '../helpers/build-test-app.ts';
import { acceptDisclosures } from '../helpers/disclosures.ts';
import { advanceBody, createPaidWorker, firstError, postTransfer } from '../helpers/money.ts';
import { operatorApp } from '../helpers/operator.ts';

const publication = (attributes: Record<string, unknown>) => ({ data: { type: 'disclosures', attributes } });

test('POST /admin/disclosures publishes the next version: a material change the person must accept again', async (t) => {
  const { app, call } = await operatorApp(t);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  await app.database.db
    .updateTable('people')
    .set({ state_of_residence: 'SC' })
    .where('id', '=', worker.personId)
    .execute();
  await acceptDisclosures(worker);
  const advance = (amount: number) => postTransfer(app, worker.token, advanceBody(worker, { amount }));
  const made = await advance(2000);
  assert.equal(made.statusCode, 200, made.body);

  const published = await call(
    'POST',
    '/admin/disclosures',
    publication({ title: 'Earned wage access terms', body: 'Version two of the terms.' }),
  );
  assert.equal(published.statusCode, 201, published.body);
  assert.equal(published.json().data.attributes.version, 2);
  assert.equal(published.json().data.attributes.state, null);
  const refused = await advance(2001);
  assert.equal(firstError(refused).code, 'DISCLOSURE_REQUIRED');
  await acceptDisclosures(worker);
  assert.equal((await advance(2001)).statusCode, 200);

  const listed = await call('GET', '/admin/disclosures?filter[state]=UT');
  assert.equal(listed.statusCode, 200, listed.body);
  assert.deepEqual(
    listed
      .json()
      .data.map((d: { attributes: { state: string; version: number } }) => [
        d.attributes.state,
        d.attributes.version,
      ]),
    [['UT', 1]],
  );

  const disclosure = await call('GET', `/admin/transfers/${made.json().data.id}/disclosure`);
  assert.equal(disclosure.statusCode, 200, disclosure.body);
  const { attributes } = disclosure.json().data;
  assert.equal(attributes.amount, 2000);
  assert.equal(attributes.fee, made.json().data.attributes.fee);
  assert.equal(attributes.disclosure_version, 1);
});

test('bad input on /admin/disclosures is 400 naming the field, never 500; an unknown transfer is 404', async (t) => {
  const { call } = await operatorApp(t);
  const cases: [unknown, string][] = [
    [publication({ body: 'x' }), '/data/attributes/title'],
    [publication({ title: 'T' }), '/data/attributes/body'],
    [publication({ title: 'T', body: 'x', state: 'Utah' }), '/data/attributes/state'],
    [publication({ title: 'T', body: 'x', state: 7 }), '/data/attributes/state'],
    [publication({ title: 'T', body: 'x', effective_from: 'soon' }), '/data/attributes/effective_from'],
    [publication({ title: 'T', body: 'x', version: 9 }), '/data/attributes/version'],
    [publication({ title: 'x'.repeat(201), body: 'x' }), '/data/attributes/title'],
    [{ data: { type: 'nope', attributes: {} } }, '/data/type'],
  ];
  for (const [body, pointer] of cases) {
    const response = await call('POST', '/admin/disclosures', body);
    assert.equal(response.statusCode, 400, `${JSON.stringify(body)}: ${response.body}`);
    assert.equal(firstError(response).source?.pointer, pointer, JSON.stringify(body));
  }
  const badFilter = await call('GET', '/admin/disclosures?filter[state]=XX');
  assert.equal(badFilter.statusCode, 400);
  assert.equal(firstError(badFilter).source?.parameter, 'filter[state]');
  const badId = await call('GET', '/admin/transfers/nope/disclosure');
  assert.equal(badId.statusCode, 400);
  assert.equal(firstError(badId).source?.parameter, 'transfer_id');
  const unknown = await call('GET', '/admin/transfers/182d55a6-49a9-4e7d-abf9-85f35847c580/disclosure');
  assert.equal(unknown.statusCode, 404);
});

test('an effective_from not on the calendar, of year 0 or without an offset is 400 naming it, and nothing is written', async (t) => {
  const { call } = await operatorApp(t);
  const before = (await call('GET', '/admin/disclosures')).json().data.length;
  // Date would store 2026-03-02, 2026-05-01 and 1 BC; a time without an offset would be in the server's zone.
  for (const from of [
    '2026-02-30T00:00:00Z',
    '2026-04-31',
    '2026-04-30',
    '0000-01-01T00:00:00Z',
    '2026-04-01T00:00:00',
    '2026-04-01T24:00:00Z',
    '10000-01-01T00:00:00Z',
  ]) {
    const response = await call(
      'POST',
      '/admin/disclosures',
      publication({ state: 'WY', title: 'T', body: 'x', effective_from: from }),
    );
    assert.equal(response.statusCode, 400, `${from}: ${response.body}`);
    assert.equal(firstError(response).code, 'INVALID_PARAMETERS', from);
    assert.equal(firstError(response).source?.pointer, '/data/attributes/effective_from', from);
  }
  assert.equal((await call('GET', '/admin/disclosures')).json().data.length, before, 'nothing was written');
  const leap = await call(
    'POST',
    '/admin/disclosures',
    publication({ state: 'WY', title: 'T', body: 'x', effective_from: '2028-02-29T00:00:00-05:00' }),
  );
  assert.equal(leap.statusCode, 201, leap.body);
  assert.equal(leap.json().data.attributes.effective_from, '2028-02-29T05:00:00.000Z');
});

test('GET /admin/disclosures pages in the order published: page[size], links.next, a bad cursor is 400', async (t) => {
  const { call } = await operatorApp(t);
  // The tests of this file share one database: count what was there before.
  const before = (await call('GET', '/admin/disclosures')).json().data.length;
  for (const title of ['One', 'Two'])
    assert.equal(
      (await call('POST', '/admin/disclosures', publication({ state: 'WY', title, body: title }))).statusCode,
      201,
    );
  const all = await call('GET', '/admin/disclosures');
  const ids = all.json().data.map((d: { id: string }) => d.id);
  assert.equal(ids.length, before + 2, 'two of Wyoming more');
  assert.equal(all.json().links, undefined);
  const seen: string[] = [];
  let url: string | undefined = '/admin/disclosures?page[size]=3';
  while (url) {
    const page = await call('GET', url.replace('https://api.ewa.test', ''));
    assert.equal(page.statusCode, 200, page.body);
    seen.push(...page.json().data.map((d: { id: string }) => d.id));
    url = page.json().links?.next;
  }
  assert.deepEqual(seen, ids);
  const bad = await call('GET', '/admin/disclosures?page[after]=nope');
  assert.equal(bad.statusCode, 400);
  assert.equal(firstError(bad).source?.parameter, 'page[after]');
});
