import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { BASE_URL, buildTestApp, type TestApp } from '../helpers/build-test-app.ts';
import {
  createOrganization,
  createWorker,
  linkedClientToken,
  restClient,
  workerToken,
} from '../helpers/factories.ts';

interface NewPaycheck {
  jobId: string;
  personId: string;
  status: string;
  startsAt: string;
  endsAt: string;
  depositAt: string;
  grossMinor?: number;
  debitedMinor?: number;
}

/** A paycheck row as payroll leaves it: 20% withheld, the net accessible, some of it already debited. */
async function insertPaycheck(app: TestApp, paycheck: NewPaycheck): Promise<string> {
  const id = randomUUID();
  const gross = paycheck.grossMinor ?? 100_000;
  const withheld = gross / 5;
  await app.database.db
    .insertInto('paychecks')
    .values({
      id,
      job_id: paycheck.jobId,
      person_id: paycheck.personId,
      status: paycheck.status,
      pay_period_starts_at: paycheck.startsAt,
      pay_period_ends_at: paycheck.endsAt,
      deposit_expected_at: paycheck.depositAt,
      gross_earnings_minor: gross,
      employer_withholdings_minor: withheld,
      net_earnings_minor: gross - withheld,
      accessible_minor: gross - withheld,
      total_debited_minor: paycheck.debitedMinor ?? 0,
    })
    .execute();
  return id;
}

/**
 * Alice has two jobs: biweekly pay at Acme (four periods, each status once) and monthly pay at Zenith (two
 * periods); Bob has one paycheck at Acme.
 */
async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const app = await buildTestApp(t);
  const acme = await createOrganization(app);
  const zenith = await createOrganization(app);
  const alice = await createWorker(app, acme);
  const aliceMonthly = await createWorker(app, zenith, { personId: alice.personId });
  const bob = await createWorker(app, acme);
  const biweekly = (status: string, startsAt: string, endsAt: string, depositAt: string) =>
    insertPaycheck(app, {
      jobId: alice.jobId,
      personId: alice.personId,
      status,
      startsAt,
      endsAt,
      depositAt,
    });
  const monthly = (status: string, startsAt: string, endsAt: string, depositAt: string) =>
    insertPaycheck(app, {
      jobId: aliceMonthly.jobId,
      personId: alice.personId,
      status,
      startsAt,
      endsAt,
      depositAt,
    });
  // Inserted out of order, to see the list sort them.
  const march = await biweekly(
    'ESTIMATED',
    '2026-03-02T05:00:00Z',
    '2026-03-15T04:00:00Z',
    '2026-03-20T04:00:00Z',
  );
  const january = await insertPaycheck(app, {
    jobId: alice.jobId,
    personId: alice.personId,
    status: 'DEPOSITED',
    startsAt: '2026-01-05T05:00:00Z',
    endsAt: '2026-01-18T05:00:00Z',
    depositAt: '2026-01-23T05:00:00Z',
    grossMinor: 123_450,
    debitedMinor: 7_050,
  });
  const lateJanuary = await biweekly(
    'IN_TRANSIT',
    '2026-01-19T05:00:00Z',
    '2026-02-01T05:00:00Z',
    '2026-02-06T05:00:00Z',
  );
  const february = await biweekly(
    'PROCESSING',
    '2026-02-02T05:00:00Z',
    '2026-02-15T05:00:00Z',
    '2026-02-20T05:00:00Z',
  );
  const monthlyFebruary = await monthly(
    'DEPOSITED',
    '2026-02-01T05:00:00Z',
    '2026-02-28T05:00:00Z',
    '2026-03-06T05:00:00Z',
  );
  const monthlyMarch = await monthly(
    'ESTIMATED',
    '2026-03-01T05:00:00Z',
    '2026-03-31T04:00:00Z',
    '2026-04-06T04:00:00Z',
  );
  const bobs = await insertPaycheck(app, {
    jobId: bob.jobId,
    personId: bob.personId,
    status: 'DEPOSITED',
    startsAt: '2026-01-05T05:00:00Z',
    endsAt: '2026-01-18T05:00:00Z',
    depositAt: '2026-01-23T05:00:00Z',
  });
  const aliceApi = restClient(app, await workerToken(app, alice.personId, ['user:read']));
  return {
    app,
    acme,
    alice,
    aliceMonthly,
    bob,
    aliceApi,
    paychecks: { january, lateJanuary, monthlyFebruary, february, monthlyMarch, march, bobs },
  };
}

const ids = (body: { data: { id: string }[] }) => body.data.map((paycheck) => paycheck.id);

test('GET /rest/paychecks: a person sees all of their own paychecks, oldest pay period first', async (t) => {
  const { alice, aliceMonthly, aliceApi, paychecks } = await setup(t);
  const response = await aliceApi.get('/rest/paychecks');
  assert.equal(response.statusCode, 200, response.body);
  assert.match(String(response.headers['content-type']), /^application\/vnd\.api\+json/);
  const { january, lateJanuary, monthlyFebruary, february, monthlyMarch, march } = paychecks;
  assert.deepEqual(ids(response.json()), [
    january,
    lateJanuary,
    monthlyFebruary,
    february,
    monthlyMarch,
    march,
  ]);
  const [first] = response.json().data;
  assert.deepEqual(first, {
    type: 'paychecks',
    id: january,
    attributes: {
      status: 'DEPOSITED',
      pay_period_starts_at: '2026-01-05T05:00:00.000Z',
      pay_period_ends_at: '2026-01-18T05:00:00.000Z',
      deposit_expected_at: '2026-01-23T05:00:00.000Z',
      total_debited: 7050,
      gross_earnings: 123450,
      employer_withholdings: 24690,
      net_earnings: 98760,
      currency: 'USD',
    },
    relationships: {
      person: { data: { type: 'people', id: alice.personId } },
      job: { data: { type: 'jobs', id: alice.jobId } },
    },
    links: { self: `${BASE_URL}/rest/paychecks/${january}` },
  });
  const monthly = response.json().data.find((entry: { id: string }) => entry.id === monthlyMarch);
  assert.deepEqual(monthly.relationships.job, { data: { type: 'jobs', id: aliceMonthly.jobId } });
});

test('GET /rest/paychecks/{id}: one of the own paychecks, the same object as in the list', async (t) => {
  const { aliceApi, paychecks } = await setup(t);
  const response = await aliceApi.get(`/rest/paychecks/${paychecks.march}`);
  assert.equal(response.statusCode, 200, response.body);
  const listed = (await aliceApi.get('/rest/paychecks')).json().data;
  assert.deepEqual(response.json(), {
    data: listed.find((entry: { id: string }) => entry.id === paychecks.march),
  });
  assert.equal(response.json().data.attributes.status, 'ESTIMATED');
  const upper = await aliceApi.get(`/rest/paychecks/${paychecks.march.toUpperCase()}`);
  assert.equal(upper.statusCode, 200, 'an id in upper case is the same id');
  assert.equal(upper.json().data.id, paychecks.march);
});

test("another person's paycheck, an unknown id and a non-UUID are all 404 RECORD_NOT_FOUND", async (t) => {
  const { app, bob, aliceApi, paychecks } = await setup(t);
  for (const id of [paychecks.bobs, randomUUID(), 'not-a-uuid', '42']) {
    const response = await aliceApi.get(`/rest/paychecks/${id}`);
    assert.equal(response.statusCode, 404, id);
    assert.equal(response.json().errors[0].code, 'RECORD_NOT_FOUND', id);
  }
  assert.ok(!ids((await aliceApi.get('/rest/paychecks')).json()).includes(paychecks.bobs));
  const bobApi = restClient(app, await workerToken(app, bob.personId));
  assert.deepEqual(ids((await bobApi.get('/rest/paychecks')).json()), [paychecks.bobs]);
});

test('each filter alone, combined, and the deprecated free-form filter', async (t) => {
  const { alice, aliceMonthly, aliceApi, paychecks } = await setup(t);
  const { january, lateJanuary, monthlyFebruary, february, monthlyMarch, march } = paychecks;
  const list = async (query: string) => {
    const response = await aliceApi.get(`/rest/paychecks?${query}`);
    assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
    return ids(response.json());
  };
  const q = encodeURIComponent;
  const filter = (field: string, value: string) => `${q(`filter[${field}]`)}=${q(value)}`;

  assert.deepEqual(await list(filter('job.id', alice.jobId)), [january, lateJanuary, february, march]);
  assert.deepEqual(await list(filter('job.id', aliceMonthly.jobId.toUpperCase())), [
    monthlyFebruary,
    monthlyMarch,
  ]);
  assert.deepEqual(await list(filter('job.id', randomUUID())), []);
  assert.deepEqual(await list(filter('status', 'DEPOSITED')), [january, monthlyFebruary]);
  assert.deepEqual(await list(filter('status', 'ESTIMATED')), [monthlyMarch, march]);
  assert.deepEqual(await list(filter('status', 'IN_TRANSIT')), [lateJanuary]);
  assert.deepEqual(await list(filter('status', 'PROCESSING')), [february]);

  // __gte takes the instant itself, __lt stops short of it.
  assert.deepEqual(await list(filter('deposit_expected_at__gte', '2026-03-06T05:00:00Z')), [
    monthlyFebruary,
    monthlyMarch,
    march,
  ]);
  assert.deepEqual(await list(filter('deposit_expected_at__lt', '2026-02-06T05:00:00Z')), [january]);
  assert.deepEqual(await list(filter('pay_period_ends_at__gte', '2026-02-28T05:00:00Z')), [
    monthlyFebruary,
    monthlyMarch,
    march,
  ]);
  assert.deepEqual(await list(filter('pay_period_ends_at__lt', '2026-02-01T05:00:00Z')), [january]);
  assert.deepEqual(await list(filter('pay_period_starts_at__gte', '2026-03-01T00:00:00Z')), [
    monthlyMarch,
    march,
  ]);
  assert.deepEqual(
    await list(filter('pay_period_starts_at__lt', '2026-02-01T00:00:00-05:00')),
    [january, lateJanuary],
    'an offset other than Z is the same instant',
  );

  assert.deepEqual(
    await list(
      `${filter('pay_period_starts_at__gte', '2026-02-01T05:00:00Z')}&${filter('pay_period_starts_at__lt', '2026-03-01T05:00:00Z')}`,
    ),
    [monthlyFebruary, february],
    'a window of pay periods',
  );
  assert.deepEqual(await list(`${filter('job.id', alice.jobId)}&${filter('status', 'ESTIMATED')}`), [march]);
  assert.deepEqual(
    await list(
      `${filter('job.id', aliceMonthly.jobId)}&${filter('deposit_expected_at__lt', '2026-04-01T00:00:00Z')}&${filter('status', 'DEPOSITED')}`,
    ),
    [monthlyFebruary],
  );
  assert.deepEqual(await list(`${filter('status', 'DEPOSITED')}&${filter('job.id', alice.jobId)}`), [
    january,
  ]);

  assert.deepEqual(await list(`filter=${q('status:"IN_TRANSIT" OR status:"PROCESSING"')}`), [
    lateJanuary,
    february,
  ]);
  assert.deepEqual(await list(`filter=${q(`job.id:"${aliceMonthly.jobId}" AND status:"ESTIMATED"`)}`), [
    monthlyMarch,
  ]);
  assert.deepEqual(
    await list(`filter=${q('deposit_expected_at:"2026-01-23T05:00:00.000Z"')}`),
    [january],
    'a timestamp matches as the API writes it',
  );
  assert.deepEqual(
    await list(`filter=${q('deposit_expected_at:"2026-01-23T00:00:00-05:00"')}`),
    [january],
    'and as the same instant in another offset',
  );
  assert.deepEqual(
    await list(
      `filter=${q('pay_period_starts_at:"2026-03-01T05:00:00Z" OR pay_period_ends_at:"2026-02-01T06:00+01:00"')}`,
    ),
    [lateJanuary, monthlyMarch],
    'every date-time field compares instants',
  );
  assert.deepEqual(await list(`filter=${q('pay_period_starts_at~"2026-03"')}`), [monthlyMarch, march]);
  assert.deepEqual(
    await list(
      `filter=${q('pay_period_ends_at~"2026-02" OR status:"ESTIMATED"')}&${filter('job.id', alice.jobId)}`,
    ),
    [lateJanuary, february, march],
    'the free-form filter and filter[...] combine with AND',
  );
});

test('bad filters are 400 with the parameter named', async (t) => {
  const { aliceApi } = await setup(t);
  const cases: [string, string, string][] = [
    ['filter[job.id]=42', 'INVALID_FILTER_VALUE', 'filter[job.id]'],
    ['filter[status]=PAID', 'INVALID_FILTER_VALUE', 'filter[status]'],
    ['filter[status]=deposited', 'INVALID_FILTER_VALUE', 'filter[status]'],
    [
      'filter[deposit_expected_at__gte]=yesterday',
      'INVALID_FILTER_VALUE',
      'filter[deposit_expected_at__gte]',
    ],
    ['filter[deposit_expected_at__lt]=2026-13-01', 'INVALID_FILTER_VALUE', 'filter[deposit_expected_at__lt]'],
    [
      'filter[pay_period_ends_at__gte]=2026-03-01T10:00:00',
      'INVALID_FILTER_VALUE',
      'filter[pay_period_ends_at__gte]',
    ],
    ['filter[pay_period_starts_at__lt]=', 'INVALID_FILTER_VALUE', 'filter[pay_period_starts_at__lt]'],
    // Date would read these as 2 March, 1 May and 1 December; a bare date has no offset.
    [
      'filter[pay_period_ends_at__gte]=2026-02-30T00:00:00Z',
      'INVALID_FILTER_VALUE',
      'filter[pay_period_ends_at__gte]',
    ],
    [
      'filter[pay_period_starts_at__lt]=2026-04-31T00:00:00Z',
      'INVALID_FILTER_VALUE',
      'filter[pay_period_starts_at__lt]',
    ],
    [
      'filter[deposit_expected_at__gte]=2026-11-31',
      'INVALID_FILTER_VALUE',
      'filter[deposit_expected_at__gte]',
    ],
    ['filter[pay_period_ends_at__gte]=2026-11-22', 'INVALID_FILTER_VALUE', 'filter[pay_period_ends_at__gte]'],
    [
      'filter[pay_period_starts_at]=2026-03-01T05:00:00Z',
      'INVALID_FIELD_OPERATION',
      'filter[pay_period_starts_at]',
    ],
    [
      'filter[deposit_expected_at__gt]=2026-03-01T05:00:00Z',
      'INVALID_FIELD_OPERATION',
      'filter[deposit_expected_at__gt]',
    ],
    ['filter[status__lt]=DEPOSITED', 'INVALID_FIELD_OPERATION', 'filter[status__lt]'],
    ['filter[person.id]=x', 'INVALID_FILTER_FIELD', 'filter[person.id]'],
    ['filter[net_earnings__gte]=1', 'INVALID_FILTER_FIELD', 'filter[net_earnings__gte]'],
    ['filter[status]=DEPOSITED&filter[status]=ESTIMATED', 'INVALID_FILTER_QUERY', 'filter[status]'],
    ['filter=net_earnings:"1"', 'INVALID_FILTER_FIELD', 'filter'],
    ['filter=status~"DEP"', 'INVALID_FIELD_OPERATION', 'filter'],
    ['filter=job.id~"x"', 'INVALID_FIELD_OPERATION', 'filter'],
    ['filter=(status:"DEPOSITED"', 'INVALID_FILTER_QUERY', 'filter'],
    ['filter=status:"NOPE"', 'INVALID_FILTER_VALUE', 'filter'],
    ['filter=job.id:"x"', 'INVALID_FILTER_VALUE', 'filter'],
    ['filter=deposit_expected_at:"tomorrow"', 'INVALID_FILTER_VALUE', 'filter'],
  ];
  for (const [query, code, parameter] of cases) {
    const response = await aliceApi.get(`/rest/paychecks?${query.replace(/\[|\]/g, encodeURIComponent)}`);
    assert.equal(response.statusCode, 400, query);
    const [error] = response.json().errors;
    assert.equal(error.code, code, query);
    assert.equal(error.source.parameter, parameter, query);
  }
});

test('paychecks are for user tokens with user:read only: a client token is 403, no token 401', async (t) => {
  const { app, acme, aliceApi, paychecks } = await setup(t);
  const client = restClient(
    app,
    (await linkedClientToken(app, [acme], ['client:lookup', 'client:admin'])).token,
  );
  for (const url of ['/rest/paychecks', `/rest/paychecks/${paychecks.january}`]) {
    const forbidden = await client.get(url);
    assert.equal(forbidden.statusCode, 403, url);
    assert.equal(forbidden.json().errors[0].code, 'FORBIDDEN', url);
    const anonymous = await app.api.inject({
      method: 'GET',
      url,
      headers: { accept: 'application/vnd.api+json' },
    });
    assert.equal(anonymous.statusCode, 401, url);
    assert.equal(anonymous.json().errors[0].code, 'INVALID_TOKEN', url);
    const forged = restClient(app, 'not-a-token');
    assert.equal((await forged.get(url)).statusCode, 401, url);
  }
  assert.equal((await aliceApi.get('/rest/paychecks')).statusCode, 200, 'user:read alone is enough');
});
