import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type TestContext, test } from 'node:test';
import fc from 'fast-check';
import { ROSTER_COLUMNS } from '../../src/operator/roster-row.ts';
import { BASE_URL, buildTestApp, buildTestAppOn, type TestApp } from '../helpers/build-test-app.ts';
import { createOrganization, createWorker } from '../helpers/factories.ts';
import { operatorClient } from '../helpers/operator.ts';
import { openTestDatabase } from '../helpers/test-database.ts';
import { clientToken, createTestClient, createTestPerson, userToken } from '../helpers/tokens.ts';

const JSON_API = 'application/vnd.api+json';

/** The operator's client (admin:operator only, no redirect URI: it signs nobody in) and requests made with it. */
async function operator(t: TestContext, env: Record<string, string> = {}, ownDatabase = false) {
  const app = ownDatabase
    ? await buildTestAppOn(t, await openTestDatabase(t), env)
    : await buildTestApp(t, env);
  // Without a body, `call` sends no Content-Type either, as HTTP clients do.
  const { token, call } = await operatorClient(app);
  const roster = (organizationId: string, csv: string, contentType = 'text/csv') =>
    app.api.inject({
      method: 'POST',
      url: `/admin/organizations/${organizationId}/roster`,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      payload: csv,
    });
  return { app, token, call, roster };
}

function createBody(attributes: Record<string, unknown>) {
  return { data: { type: 'organizations', attributes } };
}

function policyBody(attributes: Record<string, unknown>, id?: string) {
  return { data: { type: 'organization_policies', ...(id ? { id } : {}), attributes } };
}

function assertError(
  response: {
    statusCode: number;
    headers: Record<string, unknown>;
    json(): { errors: Record<string, unknown>[] };
  },
  status: number,
  code: string,
  source?: Record<string, string>,
  detail?: RegExp,
) {
  assert.equal(response.statusCode, status, JSON.stringify(response.json()));
  assert.equal(response.headers['content-type'], JSON_API);
  const [error] = response.json().errors;
  assert.equal(error!.code, code);
  if (source) assert.deepEqual(error!.source, source);
  if (detail) assert.match(String(error!.detail), detail);
}

async function countRows(app: TestApp, table: 'jobs' | 'people' | 'accounts', organizationId?: string) {
  let query = app.database.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n'));
  if (organizationId && table === 'jobs')
    query = query.where('organization_id' as never, '=', organizationId as never);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

test('every /admin operation needs a client token with admin:operator', async (t) => {
  const { app } = await operator(t);
  const organizationId = await createOrganization(app);
  const { jobId } = await createWorker(app, organizationId);
  const operations: [string, string][] = [
    ['POST', '/admin/organizations'],
    ['GET', '/admin/organizations'],
    ['GET', `/admin/organizations/${organizationId}`],
    ['PATCH', `/admin/organizations/${organizationId}/policy`],
    ['POST', `/admin/organizations/${organizationId}/roster`],
    ['POST', `/admin/jobs/${jobId}/activate`],
    ['POST', `/admin/jobs/${jobId}/deactivate`],
  ];
  const partner = await createTestClient(app, { organizationIds: [organizationId] });
  const partnerToken = await clientToken(app, ['client:admin', 'client:lookup', 'health:read'], partner);
  const person = await createTestPerson(app);
  const personToken = await userToken(app, person, ['user:read', 'user:read_write'], partner.clientId);
  for (const [method, url] of operations) {
    const anonymous = await app.api.inject({ method: method as 'GET', url });
    assertError(anonymous, 401, 'INVALID_TOKEN');
    assert.match(String(anonymous.headers['www-authenticate']), /^Bearer/);
    for (const token of [partnerToken, personToken]) {
      const forbidden = await app.api.inject({
        method: method as 'GET',
        url,
        headers: { authorization: `Bearer ${token}` },
      });
      assertError(forbidden, 403, 'FORBIDDEN', undefined, /client token with admin:operator/);
    }
  }
  const job = await app.database.db
    .selectFrom('jobs')
    .select('activation_status')
    .where('id', '=', jobId)
    .executeTakeFirstOrThrow();
  assert.equal(job.activation_status, 'ACTIVATED', 'no refused call changed anything');
});

test('POST, GET /admin/organizations: created with its policy, listed by page, read one', async (t) => {
  // A database of its own: the list shows every organization, and this test counts them.
  const { call } = await operator(t, {}, true);
  const name = `Northwind ${randomUUID().slice(0, 8)}`;
  const created = await call(
    'POST',
    '/admin/organizations',
    createBody({
      name,
      policy: { access_rate_bp: 4000, fee_bank_instant_minor: 150, time_zone: 'Europe/Paris' },
    }),
  );
  assert.equal(created.statusCode, 200, created.body);
  assert.equal(created.headers['content-type'], JSON_API);
  const { data } = created.json();
  assert.equal(data.type, 'organizations');
  assert.equal(data.links.self, `${BASE_URL}/admin/organizations/${data.id}`);
  assert.equal(data.attributes.name, name);
  assert.deepEqual(data.attributes.products, ['ODP']);
  assert.equal(data.attributes.policy.access_rate_bp, 4000);
  assert.equal(data.attributes.policy.fee_bank_instant_minor, 150);
  assert.equal(data.attributes.policy.time_zone, 'Europe/Paris');
  assert.equal(data.attributes.policy.minimum_transfer_minor, 500, 'the defaults fill the rest');

  const read = await call('GET', `/admin/organizations/${data.id}`);
  assert.equal(read.statusCode, 200);
  assert.deepEqual(read.json().data, data);

  for (const other of ['Aardvark', 'Zebra']) {
    assert.equal(
      (await call('POST', '/admin/organizations', createBody({ name: `${other} ${name}` }))).statusCode,
      200,
    );
  }
  const firstPage = await call('GET', '/admin/organizations?page[limit]=2');
  assert.equal(firstPage.statusCode, 200);
  const page = firstPage.json();
  assert.deepEqual(
    page.data.map((organization: { attributes: { name: string } }) => organization.attributes.name),
    [`Aardvark ${name}`, name],
    'by name',
  );
  assert.equal(page.links.next, `${BASE_URL}/admin/organizations?page%5Boffset%5D=2&page%5Blimit%5D=2`);
  const rest = (await call('GET', '/admin/organizations?page[offset]=2&page[limit]=2')).json();
  assert.deepEqual(
    rest.data.map((organization: { attributes: { name: string } }) => organization.attributes.name),
    [`Zebra ${name}`],
  );
  assert.equal(rest.links.next, undefined, 'a short page is the last');
  const tooFar = await call('GET', '/admin/organizations?page[offset]=99999999999999999999');
  assertError(tooFar, 400, 'INVALID_PARAMETERS');
  assert.equal(
    tooFar.json().errors[0].detail,
    'Parameter page[offset] must be a whole number of at most 9 digits.',
  );

  for (const id of [randomUUID(), 'not-a-uuid']) {
    assertError(await call('GET', `/admin/organizations/${id}`), 404, 'RECORD_NOT_FOUND');
  }
});

test('POST /admin/organizations: bad input is 400 naming the field, and creates nothing', async (t) => {
  const { app, call } = await operator(t);
  const before = Number(
    (
      await app.database.db
        .selectFrom('organizations')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
  const cases: [unknown, string, string, RegExp?][] = [
    [createBody({}), 'MISSING_REQUIRED_FIELD', '/data/attributes/name'],
    [createBody({ name: '' }), 'INVALID_PARAMETERS', '/data/attributes/name'],
    [createBody({ name: '   ' }), 'INVALID_PARAMETERS', '/data/attributes/name', /name must be 1 to 200/],
    [createBody({ name: 'X', products: ['CARD'] }), 'INVALID_PARAMETERS', '/data/attributes/products/0'],
    [
      createBody({ name: 'X', policy: { access_rate_bp: 10001 } }),
      'INVALID_PARAMETERS',
      '/data/attributes/policy/access_rate_bp',
    ],
    [
      createBody({ name: 'X', policy: { access_rate_bp: '50' } }),
      'INVALID_PARAMETERS',
      '/data/attributes/policy/access_rate_bp',
    ],
    [
      createBody({ name: 'X', policy: { time_zone: '+05:30' } }),
      'INVALID_PARAMETERS',
      '/data/attributes/policy/time_zone',
      /IANA time zone/,
    ],
    [
      createBody({ name: 'X', policy: { currency: 'ABC' } }),
      'INVALID_PARAMETERS',
      '/data/attributes/policy/currency',
      /ISO 4217/,
    ],
    [
      createBody({ name: 'X', policy: { pay_calendar_anchor: '2026-02-30' } }),
      'INVALID_PARAMETERS',
      '/data/attributes/policy/pay_calendar_anchor',
    ],
    [
      createBody({ name: 'X', policy: { minimum_transfer_minor: 200_000 } }),
      'INVALID_PARAMETERS',
      '/data/attributes/policy/minimum_transfer_minor',
      /must not be above maximum_transfer_minor/,
    ],
    [
      createBody({ name: 'X', policy: { bogus: 1 } }),
      'INVALID_PARAMETERS',
      '/data/attributes/policy/bogus',
      /not a known field/,
    ],
    [createBody({ name: 'X', extra: true }), 'INVALID_PARAMETERS', '/data/attributes/extra'],
    [{ data: { type: 'people', attributes: { name: 'X' } } }, 'INVALID_PARAMETERS', '/data/type'],
  ];
  for (const [body, code, pointer, detail] of cases) {
    assertError(await call('POST', '/admin/organizations', body), 400, code, { pointer }, detail);
  }
  const after = Number(
    (
      await app.database.db
        .selectFrom('organizations')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
  assert.equal(after, before);
});

test('PATCH /admin/organizations/{id}/policy changes the fields given and checks the whole policy', async (t) => {
  const { app, call } = await operator(t);
  const organizationId = (
    await call('POST', '/admin/organizations', createBody({ name: 'Policy Co' }))
  ).json().data.id;
  const url = `/admin/organizations/${organizationId}/policy`;
  const changed = await call(
    'PATCH',
    url,
    policyBody(
      { pay_frequency: 'MONTHLY', fee_card_instant_minor: null, fee_bank_instant_minor: 150 },
      organizationId,
    ),
  );
  assert.equal(changed.statusCode, 200, changed.body);
  const { data } = changed.json();
  assert.equal(data.type, 'organization_policies');
  assert.equal(data.id, organizationId);
  assert.equal(data.links.self, `${BASE_URL}${url}`);
  assert.equal(data.attributes.pay_frequency, 'MONTHLY');
  assert.equal(data.attributes.fee_card_instant_minor, null);
  assert.equal(data.attributes.access_rate_bp, 5000, 'the others stay');
  const stored = await app.database.db
    .selectFrom('organization_policies')
    .select(['pay_frequency', 'fee_card_instant_minor', 'fee_bank_instant_minor'])
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  assert.deepEqual(stored, {
    pay_frequency: 'MONTHLY',
    fee_card_instant_minor: null,
    fee_bank_instant_minor: 150,
  });

  const cases: [unknown, string, RegExp?][] = [
    [
      policyBody({ maximum_fee_minor: 100 }),
      '/data/attributes/maximum_fee_minor',
      /fee_bank_instant_minor \(150\) must not be above maximum_fee_minor \(100\)/,
    ],
    [
      policyBody({ fee_card_next_day_minor: 5000 }),
      '/data/attributes/fee_card_next_day_minor',
      /above maximum_fee_minor/,
    ],
    [policyBody({ pay_frequency: 'DAILY' }), '/data/attributes/pay_frequency'],
    [policyBody({ daily_transfer_count_max: -1 }), '/data/attributes/daily_transfer_count_max'],
    [policyBody({ transfers_enabled: 'false' }), '/data/attributes/transfers_enabled'],
    [policyBody({ payday_offset_days: 1.5 }), '/data/attributes/payday_offset_days'],
    [policyBody({ nonsense: 1 }), '/data/attributes/nonsense'],
    [policyBody({}, randomUUID()), '/data/id', /must be the id in the path/],
  ];
  for (const [body, pointer, detail] of cases) {
    assertError(await call('PATCH', url, body), 400, 'INVALID_PARAMETERS', { pointer }, detail);
  }
  const kept = await app.database.db
    .selectFrom('organization_policies')
    .select(['maximum_fee_minor', 'pay_frequency'])
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  assert.deepEqual(
    kept,
    { maximum_fee_minor: 999, pay_frequency: 'MONTHLY' },
    'refused changes wrote nothing',
  );

  assert.equal((await call('PATCH', url, policyBody({ currency: 'EUR' }))).statusCode, 200, 'no jobs yet');
  await createWorker(app, organizationId);
  assertError(
    await call('PATCH', url, policyBody({ currency: 'USD' })),
    400,
    'INVALID_PARAMETERS',
    { pointer: '/data/attributes/currency' },
    /cannot change from EUR to USD: the organization has jobs/,
  );
  assertError(
    await call('PATCH', `/admin/organizations/${randomUUID()}/policy`, policyBody({})),
    404,
    'RECORD_NOT_FOUND',
  );
});

test('POST /admin/organizations/{id}/roster imports text/csv, reports bad lines, and is idempotent', async (t) => {
  const { app, call, roster } = await operator(t);
  const organizationId = (
    await call('POST', '/admin/organizations', createBody({ name: 'Roster Co' }))
  ).json().data.id;
  const tag = randomUUID().slice(0, 8);
  const csv = [
    'Primary_Identifier,First_Name,Last_Name,Email,Wage_Amount,Wage_Frequency,Group',
    `R-1,Alex,Rivera,alex.${tag}@example.com,24.00,HOURLY,north`,
    `R-2,Bailey,Chen,bailey.${tag}@example.com,-3,HOURLY,south`,
    `R-3,Casey,"Morgan ""CM""",casey.${tag}@example.com,1000.5,WEEKLY,`,
    `R-1,Dup,Line,dup.${tag}@example.com,1,HOURLY,`,
    `R-4,Devon,Patel,alex.${tag}@example.com,19.99,HOURLY,north`,
  ].join('\n');
  const first = await roster(organizationId, csv);
  assert.equal(first.statusCode, 200, first.body);
  assert.equal(first.headers['content-type'], JSON_API);
  const { data } = first.json();
  assert.equal(data.type, 'roster_imports');
  assert.deepEqual(
    {
      organization_id: data.attributes.organization_id,
      created: data.attributes.created,
      updated: data.attributes.updated,
      unchanged: data.attributes.unchanged,
      rejected: data.attributes.rejected,
      truncated: data.attributes.rejected_lines_truncated,
    },
    { organization_id: organizationId, created: 3, updated: 0, unchanged: 0, rejected: 2, truncated: false },
  );
  assert.deepEqual(
    data.attributes.rejected_lines.map((problem: { line: number; field: string }) => [
      problem.line,
      problem.field,
    ]),
    [
      [3, 'wage_amount'],
      [5, 'primary_identifier'],
    ],
  );
  assert.match(data.attributes.rejected_lines[1].detail, /"R-1" is already on line 2 of this file/);

  const jobs = await app.database.db
    .selectFrom('jobs')
    .innerJoin('people', 'people.id', 'jobs.person_id')
    .select([
      'jobs.external_primary_identifier as pid',
      'jobs.last_name',
      'jobs.wage_rate_minor',
      'jobs.external_group',
      'people.email',
      'jobs.earnings_balance_account_id',
    ])
    .where('jobs.organization_id', '=', organizationId)
    .orderBy('jobs.external_primary_identifier')
    .execute();
  assert.deepEqual(
    jobs.map((job) => [job.pid, job.last_name, job.wage_rate_minor, job.external_group, job.email]),
    [
      ['R-1', 'Rivera', 2400, 'north', `alex.${tag}@example.com`],
      ['R-3', 'Morgan "CM"', 100_050, null, `casey.${tag}@example.com`],
      ['R-4', 'Patel', 1999, 'north', `alex.${tag}@example.com`],
    ],
    'one person with two jobs (same email); nothing of the bad lines',
  );
  assert.ok(jobs.every((job) => job.earnings_balance_account_id !== null));
  assert.equal(
    (
      await app.database.db
        .selectFrom('people')
        .select('id')
        .where('email', '=', `bailey.${tag}@example.com`)
        .execute()
    ).length,
    0,
  );

  const again = (await roster(organizationId, csv)).json().data.attributes;
  assert.deepEqual([again.created, again.updated, again.unchanged, again.rejected], [0, 0, 3, 2]);
  assert.equal(await countRows(app, 'jobs', organizationId), 3);

  const moved = await roster(
    organizationId,
    `primary_identifier,first_name,last_name,email,wage_amount,wage_frequency\nR-3,Casey,Morgan,alex.${tag}@example.com,1000.50,WEEKLY\n`,
  );
  assert.equal(moved.statusCode, 200);
  const refused = moved.json().data.attributes;
  assert.equal(refused.rejected, 1);
  assert.equal(refused.rejected_lines[0].field, 'email');
  assert.match(refused.rejected_lines[0].detail, /belongs to another person than the worker of job R-3/);
});

test('POST roster: a wrong header is 400, another media type 415, a body over the limit 413, an unknown organization 404', async (t) => {
  const { app, token, call, roster } = await operator(t, { EWA_BODY_LIMIT_BYTES: '4096' });
  const organizationId = (
    await call('POST', '/admin/organizations', createBody({ name: 'Limits Co' }))
  ).json().data.id;
  const header = 'primary_identifier,first_name,last_name,email,wage_amount,wage_frequency';
  assertError(
    await roster(
      organizationId,
      'primary_identifier,first_name,last_name,emial,wage_amount,wage_frequency\nP,A,B,c,1,HOURLY\n',
    ),
    400,
    'INVALID_PARAMETERS',
    { pointer: '' },
    /line 1: "emial" is not a roster column/,
  );
  assertError(
    await roster(organizationId, ''),
    400,
    'INVALID_PARAMETERS',
    { pointer: '' },
    /roster is empty/,
  );
  // No body and no Content-Type: the operation's own media type is named.
  const bodiless = await app.api.inject({
    method: 'POST',
    url: `/admin/organizations/${organizationId}/roster`,
    headers: { authorization: `Bearer ${token}` },
  });
  assertError(
    bodiless,
    400,
    'INVALID_USER_INPUT',
    { pointer: '' },
    /^The request body is empty; send it as text\/csv\.$/,
  );
  assertError(
    await roster(organizationId, `${header}\nP,A,B,c@d.example,1,HOURLY\n`, JSON_API),
    415,
    'UNSUPPORTED_MEDIA_TYPE',
  );
  const line = (i: number) => `P-${i},Worker,Number ${i},worker${i}@example.com,20.00,HOURLY`;
  const large = [header, ...Array.from({ length: 120 }, (_, i) => line(i))].join('\n');
  assert.ok(Buffer.byteLength(large) > 4096);
  assertError(await roster(organizationId, large), 413, 'PAYLOAD_TOO_LARGE');
  assertError(await roster(randomUUID(), `${header}\n${line(1)}\n`), 404, 'RECORD_NOT_FOUND');
  const broken = await roster(organizationId, `${header}\n${line(1)}\n"unclosed,A,B,c@d.example,1,HOURLY\n`);
  assert.equal(broken.statusCode, 200);
  const result = broken.json().data.attributes;
  assert.equal(result.created, 1, 'the lines before the broken one are imported');
  assert.equal(result.rejected_lines[0].line, 3);
  assert.match(result.rejected_lines[0].detail, /not valid CSV from this line on/);
  assert.equal(await countRows(app, 'jobs', organizationId), 1);
});

test('POST /admin/jobs/{id}/activate and deactivate: the earnings balance account is made once and kept', async (t) => {
  const { app, call } = await operator(t);
  const organizationId = await createOrganization(app);
  const { jobId, personId } = await createWorker(app, organizationId, {
    activationStatus: 'ACTIVATION_REQUIRED',
  });
  const balances = () =>
    app.database.db
      .selectFrom('accounts')
      .select(['id', 'account_type', 'subtype', 'details', 'name', 'currency'])
      .where('person_id', '=', personId)
      .execute();
  assert.equal((await balances()).length, 0);

  const activated = await call('POST', `/admin/jobs/${jobId}/activate`);
  assert.equal(activated.statusCode, 200, activated.body);
  const { data } = activated.json();
  assert.equal(data.type, 'jobs');
  assert.equal(data.attributes.activation_status, 'ACTIVATED');
  assert.equal(data.meta.earnings_balance_account_created, true);
  assert.deepEqual(data.relationships.person.data, { type: 'people', id: personId });
  assert.equal(data.links.self, `${BASE_URL}/rest/jobs/${jobId}`);
  const accountId = data.relationships.earnings_balance_account.data.id;
  assert.deepEqual(await balances(), [
    {
      id: accountId,
      account_type: 'EARNINGS_BALANCE',
      subtype: 'ODP',
      details: {},
      name: 'Earnings balance',
      currency: 'USD',
    },
  ]);

  const deactivated = (await call('POST', `/admin/jobs/${jobId}/deactivate`)).json().data;
  assert.equal(deactivated.attributes.activation_status, 'DEACTIVATED');
  assert.equal(deactivated.relationships.earnings_balance_account.data.id, accountId, 'kept');
  const reactivated = (await call('POST', `/admin/jobs/${jobId}/activate`)).json().data;
  assert.equal(reactivated.relationships.earnings_balance_account.data.id, accountId);
  assert.equal(reactivated.meta.earnings_balance_account_created, false);
  assert.equal((await balances()).length, 1, 'never a second account');

  for (const id of [randomUUID(), 'nope']) {
    assertError(await call('POST', `/admin/jobs/${id}/activate`), 404, 'RECORD_NOT_FOUND');
    assertError(await call('POST', `/admin/jobs/${id}/deactivate`), 404, 'RECORD_NOT_FOUND');
  }
});

test('random bodies, CSV and ids on every /admin operation never get a 500, and leave a coherent policy', async (t) => {
  const { app, call, roster } = await operator(t);
  const organizationId = (await call('POST', '/admin/organizations', createBody({ name: 'Fuzz Co' }))).json()
    .data.id;
  const columns = [...Object.keys(ROSTER_COLUMNS), 'bogus', ' Email '];
  const cell = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom(
      '24.00',
      '1e3',
      'HOURLY',
      'ACTIVATED',
      'ny',
      'a@b.example',
      organizationId,
      '"',
      '""',
      '\n',
      '\r\n',
      ',',
    ),
    fc.integer().map(String),
  );
  const csv = fc
    .tuple(
      fc.shuffledSubarray(columns, { minLength: 1 }),
      fc.array(fc.array(cell, { maxLength: 16 }), { maxLength: 6 }),
      fc.constantFrom('\n', '\r\n', '\r'),
    )
    .map(([header, rows, newline]) => [header.join(','), ...rows.map((row) => row.join(','))].join(newline));
  const attributes = fc.dictionary(
    fc.constantFrom(
      'name',
      'products',
      'policy',
      'access_rate_bp',
      'currency',
      'time_zone',
      'fee_bank_instant_minor',
      'x',
    ),
    fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.dictionary(
        fc.constantFrom('access_rate_bp', 'currency', 'pay_calendar_anchor'),
        fc.jsonValue({ maxDepth: 1 }),
      ),
    ),
  );
  const body = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    attributes.map((value) => createBody(value)),
    attributes.map((value) => policyBody(value)),
  );
  const id = fc.oneof(fc.uuid(), fc.string({ maxLength: 70 }), fc.constant(organizationId));
  const check = (response: { statusCode: number; body: string }, what: string) => {
    assert.ok(response.statusCode < 500, `${what}: ${response.statusCode} ${response.body}`);
    if (response.statusCode >= 400) assert.ok(Array.isArray(JSON.parse(response.body).errors), what);
  };
  await fc.assert(
    fc.asyncProperty(body, csv, id, async (json, text, someId) => {
      const path = encodeURIComponent(someId);
      check(await call('POST', '/admin/organizations', json), `POST organizations ${JSON.stringify(json)}`);
      check(
        await call('PATCH', `/admin/organizations/${path}/policy`, json),
        `PATCH policy ${JSON.stringify(json)}`,
      );
      check(await call('GET', `/admin/organizations/${path}`), `GET ${someId}`);
      check(await call('GET', `/admin/organizations?page[offset]=${path}`), `GET page ${someId}`);
      check(await roster(organizationId, text), `roster ${JSON.stringify(text)}`);
      check(await call('POST', `/admin/jobs/${path}/activate`), `activate ${someId}`);
    }),
    { seed: 20_261_123, numRuns: 150 },
  );
  // Whatever was accepted, the invariants between policy fields hold.
  const policies = await app.database.db.selectFrom('organization_policies').selectAll().execute();
  for (const policy of policies) {
    assert.ok(policy.minimum_transfer_minor <= policy.maximum_transfer_minor);
    for (const fee of [
      policy.fee_card_instant_minor,
      policy.fee_card_next_day_minor,
      policy.fee_bank_instant_minor,
      policy.fee_bank_next_day_minor,
    ]) {
      assert.ok(fee === null || fee <= policy.maximum_fee_minor);
    }
  }
});
