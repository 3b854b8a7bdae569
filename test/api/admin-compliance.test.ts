import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { FIXED_NOW } from '../helpers/build-test-app.ts';
import { acceptDisclosures } from '../helpers/disclosures.ts';
import { advanceBody, createPaidWorker, firstError, postTransfer } from '../helpers/money.ts';
import { operatorApp } from '../helpers/operator.ts';
import { clientToken, createTestClient } from '../helpers/tokens.ts';

const JSON_API = 'application/vnd.api+json';
const RULES = '/admin/compliance/rules';

/** An app with an operator's client; its requests to /admin. The tests of this file share one database. */
async function operator(t: TestContext) {
  const { app, call, token, clientId } = await operatorApp(t);
  t.after(async () => {
    await app.database.db.deleteFrom('compliance_rule_overrides').execute();
    await sql`update app_settings set value = to_jsonb((value #>> '{}')::bigint + 1)
      where key = 'compliance_rules_version'`.execute(app.database.db);
  });
  return { app, call, token, clientId };
}

function ruleBody(attributes: Record<string, unknown>, id?: string) {
  return { data: { type: 'compliance_rules', ...(id === undefined ? {} : { id }), attributes } };
}

const NO_SERVICE_CT = {
  state: 'CT',
  kind: 'NO_SERVICE',
  params: { reason: 'Licence pending.' },
  effective_from: '2026-01-01',
  source: 'Operator decision',
};

test('GET /admin/compliance/rules: the effective set, by state and by day', async (t) => {
  const { call } = await operator(t);
  const all = await call('GET', RULES);
  assert.equal(all.statusCode, 200, all.body);
  assert.equal(all.headers['content-type'], JSON_API);
  const body = all.json();
  assert.equal(typeof body.meta.file_version, 'string');
  const ct = body.data.find((rule: { id: string }) => rule.id === 'CT-FEE-CAP-MONTH');
  assert.equal(ct.type, 'compliance_rules');
  assert.deepEqual(ct.attributes.params, { max_fees_minor: 3000 });
  assert.equal(ct.attributes.origin, 'FILE');
  assert.equal(ct.links.self, 'https://api.ewa.test/admin/compliance/rules/CT-FEE-CAP-MONTH');
  const nevada = await call('GET', `${RULES}?filter[state]=NV&filter[on]=2030-01-01`);
  assert.deepEqual(nevada.json().data, [], "Nevada's law sunsets on 2029-12-31");
  const one = await call('GET', `${RULES}/MD-FEE-CAP-ADVANCE`);
  assert.equal(one.statusCode, 200, one.body);
  assert.equal(one.json().data.attributes.kind, 'FEE_CAP_PER_ADVANCE');
});

test('POST, PATCH, DELETE: an override applies to the next advance, who made it is kept', async (t) => {
  const { app, call, clientId } = await operator(t);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  await app.database.db
    .updateTable('people')
    .set({ state_of_residence: 'CT' })
    .where('id', '=', worker.personId)
    .execute();
  await acceptDisclosures(worker);
  const advance = async () =>
    postTransfer(app, worker.token, advanceBody(worker, { amount: 1000, preview: true }));
  assert.equal((await advance()).statusCode, 200);

  const created = await call('POST', RULES, ruleBody(NO_SERVICE_CT, 'CT-NO-SERVICE'));
  assert.equal(created.statusCode, 200, created.body);
  assert.equal(created.json().data.attributes.origin, 'OPERATOR');
  assert.equal(created.json().data.attributes.changed_by, `client:${clientId}`);
  const refused = await advance();
  assert.equal(refused.statusCode, 400);
  assert.equal(firstError(refused).code, 'TRANSFERS_DISABLED');

  const off = await call('PATCH', `${RULES}/CT-NO-SERVICE`, ruleBody({ enabled: false }));
  assert.equal(off.statusCode, 200, off.body);
  assert.equal(off.json().data.attributes.enabled, false);
  assert.equal((await advance()).statusCode, 200);

  const changed = await call(
    'PATCH',
    `${RULES}/CT-NO-SERVICE`,
    ruleBody({ enabled: true, effective_from: '2027-01-01' }),
  );
  assert.equal(changed.statusCode, 200, changed.body);
  assert.equal(changed.json().data.attributes.effective_from, '2027-01-01');
  assert.equal((await advance()).statusCode, 200, 'from 2027 only');

  const lower = await call(
    'PATCH',
    `${RULES}/CT-FEE-CAP-ADVANCE`,
    ruleBody({ params: { tiers: [{ max_fee_minor: 0 }] } }),
  );
  assert.equal(lower.statusCode, 200, lower.body);
  assert.equal(lower.json().data.attributes.origin, 'FILE_CHANGED');

  assert.equal((await call('DELETE', `${RULES}/CT-NO-SERVICE`)).statusCode, 204);
  assert.equal((await call('GET', `${RULES}/CT-NO-SERVICE`)).statusCode, 404);
  assert.equal((await call('DELETE', `${RULES}/CT-FEE-CAP-ADVANCE`)).statusCode, 204);
  const back = await call('GET', `${RULES}/CT-FEE-CAP-ADVANCE`);
  assert.equal(back.json().data.attributes.origin, 'FILE');
  assert.deepEqual(back.json().data.attributes.params, { tiers: [{ max_fee_minor: 400 }] });
  assert.equal((await call('DELETE', `${RULES}/CT-FEE-CAP-ADVANCE`)).statusCode, 404, 'no override left');
});

test('POST with enabled false adds the rule switched off, in one write; true or absent on; PATCH does the same', async (t) => {
  const { app, call } = await operator(t);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  await app.database.db
    .updateTable('people')
    .set({ state_of_residence: 'CT' })
    .where('id', '=', worker.personId)
    .execute();
  await acceptDisclosures(worker);
  const advance = async () =>
    postTransfer(app, worker.token, advanceBody(worker, { amount: 1000, preview: true }));
  const versionOf = async () =>
    (
      await app.database.db
        .selectFrom('app_settings')
        .select(sql<string>`value #>> '{}'`.as('version'))
        .where('key', '=', 'compliance_rules_version')
        .executeTakeFirst()
    )?.version;

  const before = await versionOf();
  const off = await call('POST', RULES, ruleBody({ ...NO_SERVICE_CT, enabled: false }, 'CT-NO-SERVICE'));
  assert.equal(off.statusCode, 200, off.body);
  assert.equal(off.json().data.attributes.enabled, false);
  assert.equal(Number(await versionOf()), Number(before ?? 0) + 1, 'one write, never on in between');
  assert.equal((await call('GET', `${RULES}/CT-NO-SERVICE`)).json().data.attributes.enabled, false);
  const listed = await call('GET', `${RULES}?filter[state]=CT&filter[on]=2026-03-11`);
  assert.ok(!listed.json().data.some((rule: { id: string }) => rule.id === 'CT-NO-SERVICE'));
  assert.equal((await advance()).statusCode, 200, 'a rule switched off applies to no one');

  // Replaced whole without enabled: it keeps its switch, as `ewa compliance set` does.
  const replaced = await call(
    'POST',
    RULES,
    ruleBody({ ...NO_SERVICE_CT, params: { reason: 'Still pending.' } }, 'CT-NO-SERVICE'),
  );
  assert.equal(replaced.statusCode, 200, replaced.body);
  assert.equal(replaced.json().data.attributes.enabled, false);
  assert.equal((await advance()).statusCode, 200);

  const on = await call('POST', RULES, ruleBody({ ...NO_SERVICE_CT, enabled: true }, 'CT-NO-SERVICE'));
  assert.equal(on.statusCode, 200, on.body);
  assert.equal(on.json().data.attributes.enabled, true);
  assert.equal(firstError(await advance()).code, 'TRANSFERS_DISABLED');

  // A file rule replaced and switched off by one POST; a PATCH of fields and switch is one write too.
  const fileRule = await call(
    'POST',
    RULES,
    ruleBody(
      {
        state: 'CT',
        kind: 'FEE_CAP_PER_MONTH',
        params: { max_fees_minor: 2000 },
        effective_from: '2025-10-01',
        source: 'Operator decision',
        enabled: false,
      },
      'CT-FEE-CAP-MONTH',
    ),
  );
  assert.equal(fileRule.statusCode, 200, fileRule.body);
  assert.equal(fileRule.json().data.attributes.origin, 'FILE_CHANGED');
  assert.equal(fileRule.json().data.attributes.enabled, false);
  const beforePatch = Number(await versionOf());
  const patched = await call(
    'PATCH',
    `${RULES}/CT-NO-SERVICE`,
    ruleBody({ enabled: false, params: { reason: 'Paused.' } }),
  );
  assert.equal(patched.statusCode, 200, patched.body);
  assert.equal(patched.json().data.attributes.enabled, false);
  assert.deepEqual(patched.json().data.attributes.params, { reason: 'Paused.' });
  assert.equal(Number(await versionOf()), beforePatch + 1, 'one write');
  assert.equal((await advance()).statusCode, 200);
});

test('every bad input is a 400 naming the field, and writes nothing', async (t) => {
  const { app, call } = await operator(t);
  const cases: [string, 'POST' | 'PATCH' | 'GET', string, unknown, Record<string, string>][] = [
    ['no id', 'POST', RULES, ruleBody(NO_SERVICE_CT), { pointer: '/data/id' }],
    ['bad id', 'POST', RULES, ruleBody(NO_SERVICE_CT, 'ct no service'), { pointer: '/data/id' }],
    [
      'state',
      'POST',
      RULES,
      ruleBody({ ...NO_SERVICE_CT, state: 'XX' }, 'X1'),
      { pointer: '/data/attributes/state' },
    ],
    [
      'kind',
      'POST',
      RULES,
      ruleBody({ ...NO_SERVICE_CT, kind: 'TIPS' }, 'X1'),
      { pointer: '/data/attributes/kind' },
    ],
    [
      'missing source',
      'POST',
      RULES,
      ruleBody({ ...NO_SERVICE_CT, source: undefined }, 'X1'),
      { pointer: '/data/attributes/source' },
    ],
    [
      'day',
      'POST',
      RULES,
      ruleBody({ ...NO_SERVICE_CT, effective_from: '2026-13-01' }, 'X1'),
      { pointer: '/data/attributes/effective_from' },
    ],
    [
      'params',
      'POST',
      RULES,
      ruleBody({ ...NO_SERVICE_CT, params: { reason: '' } }, 'X1'),
      { pointer: '/data/attributes/params/reason' },
    ],
    [
      'a tier',
      'PATCH',
      `${RULES}/MD-FEE-CAP-ADVANCE`,
      ruleBody({
        params: { tiers: [{ up_to_amount_minor: 7500, max_fee_minor: -1 }, { max_fee_minor: 750 }] },
      }),
      { pointer: '/data/attributes/params/tiers/0/max_fee_minor' },
    ],
    [
      'unknown attribute',
      'PATCH',
      `${RULES}/MD-FEE-CAP-ADVANCE`,
      ruleBody({ cap: 1 }),
      { pointer: '/data/attributes/cap' },
    ],
    [
      'unknown attribute on POST',
      'POST',
      RULES,
      ruleBody({ ...NO_SERVICE_CT, cap: 1 }, 'X1'),
      { pointer: '/data/attributes/cap' },
    ],
    [
      'a read-only attribute on POST',
      'POST',
      RULES,
      ruleBody({ ...NO_SERVICE_CT, origin: 'OPERATOR' }, 'X1'),
      { pointer: '/data/attributes/origin' },
    ],
    [
      'an unknown attribute named id',
      'POST',
      RULES,
      ruleBody({ ...NO_SERVICE_CT, id: 'X2' }, 'X1'),
      { pointer: '/data/attributes/id' },
    ],
    [
      'an unknown attribute with a dot and a slash',
      'PATCH',
      `${RULES}/MD-FEE-CAP-ADVANCE`,
      ruleBody({ 'params.reason/x': 1 }),
      { pointer: '/data/attributes/params.reason~1x' },
    ],
    [
      'enabled on POST',
      'POST',
      RULES,
      ruleBody({ ...NO_SERVICE_CT, enabled: 'no' }, 'X1'),
      { pointer: '/data/attributes/enabled' },
    ],
    [
      'enabled',
      'PATCH',
      `${RULES}/MD-FEE-CAP-ADVANCE`,
      ruleBody({ enabled: 'no' }),
      { pointer: '/data/attributes/enabled' },
    ],
    [
      'until before from',
      'PATCH',
      `${RULES}/MD-FEE-CAP-ADVANCE`,
      ruleBody({ effective_until: '2020-01-01' }),
      { pointer: '/data/attributes/effective_until' },
    ],
    ['filter state', 'GET', `${RULES}?filter[state]=ZZ`, undefined, { parameter: 'filter[state]' }],
    ['filter day', 'GET', `${RULES}?filter[on]=tomorrow`, undefined, { parameter: 'filter[on]' }],
    ['rule id', 'GET', `${RULES}/not%20an%20id`, undefined, { parameter: 'rule_id' }],
  ];
  for (const [name, method, url, body, source] of cases) {
    const response = await call(method, url, body);
    assert.equal(response.statusCode, 400, `${name}: ${response.body}`);
    const [error] = response.json().errors;
    assert.equal(error.code, 'INVALID_PARAMETERS', name);
    assert.deepEqual(error.source, source, `${name}: ${response.body}`);
  }
  // A body that is no rule at all is refused by the schema, also a 400.
  const wrongType = await call('POST', RULES, { data: { type: 'rules', id: 'X1', attributes: {} } });
  assert.equal(wrongType.statusCode, 400, wrongType.body);
  const unknown = await call('PATCH', `${RULES}/NO-SUCH-RULE`, ruleBody({ enabled: false }));
  assert.equal(unknown.statusCode, 404, unknown.body);
  const rows = await app.database.db.selectFrom('compliance_rule_overrides').selectAll().execute();
  assert.deepEqual(rows, []);
});

test("state_of_residence_source: the employer's roster, or the person", async (t) => {
  const { app, call, token } = await operator(t);
  const organization = await call('POST', '/admin/organizations', {
    data: { type: 'organizations', attributes: { name: 'Compliance roster employer' } },
  });
  const organizationId = organization.json().data.id;
  const roster = await app.api.inject({
    method: 'POST',
    url: `/admin/organizations/${organizationId}/roster`,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'text/csv',
    },
    payload:
      'primary_identifier,employee_id,first_name,last_name,email,state_of_residence,title,wage_amount,wage_frequency\n' +
      'CMP-1,E1,Casey,Moss,casey.compliance@example.com,CT,Clerk,2000,HOURLY\n',
  });
  assert.equal(roster.statusCode, 200, roster.body);
  const person = await app.database.db
    .selectFrom('people')
    .select(['id', 'state_of_residence', 'state_of_residence_source'])
    .where('email', '=', 'casey.compliance@example.com')
    .executeTakeFirstOrThrow();
  assert.deepEqual([person.state_of_residence, person.state_of_residence_source], ['CT', 'EMPLOYER_RECORD']);

  const worker = await createPaidWorker(app, { earnedMinor: 1000, now: FIXED_NOW });
  const patched = await worker.api.patch(`/rest/people/${worker.personId}`, {
    data: { type: 'people', id: worker.personId, attributes: { state_of_residence: 'MD' } },
  });
  assert.equal(patched.statusCode, 200, patched.body);
  const self = await app.database.db
    .selectFrom('people')
    .select('state_of_residence_source')
    .where('id', '=', worker.personId)
    .executeTakeFirstOrThrow();
  assert.equal(self.state_of_residence_source, 'SELF_DECLARED');
});

test('every /admin/compliance operation needs a client token with admin:operator', async (t) => {
  const { app } = await operator(t);
  const partner = await createTestClient(app, { name: 'Partner' });
  const partnerToken = await clientToken(app, ['client:lookup'], partner);
  const operations: ['GET' | 'POST' | 'PATCH' | 'DELETE', string][] = [
    ['GET', RULES],
    ['POST', RULES],
    ['GET', `${RULES}/CT-FEE-CAP-MONTH`],
    ['PATCH', `${RULES}/CT-FEE-CAP-MONTH`],
    ['DELETE', `${RULES}/CT-FEE-CAP-MONTH`],
  ];
  for (const [method, url] of operations) {
    const body =
      method === 'POST' || method === 'PATCH' ? JSON.stringify(ruleBody({ enabled: false })) : undefined;
    const headers = body === undefined ? {} : { 'content-type': JSON_API };
    const anonymous = await app.api.inject({ method, url, headers, ...(body ? { payload: body } : {}) });
    assert.equal(anonymous.statusCode, 401, `${method} ${url}`);
    const forbidden = await app.api.inject({
      method,
      url,
      headers: { ...headers, authorization: `Bearer ${partnerToken}` },
      ...(body ? { payload: body } : {}),
    });
    assert.equal(forbidden.statusCode, 403, `${method} ${url}`);
  }
  assert.deepEqual(await app.database.db.selectFrom('compliance_rule_overrides').selectAll().execute(), []);
});
