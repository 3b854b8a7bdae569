import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.ts';
import {
  bankAccountBody,
  createOrganization,
  createWorker,
  restClient,
  workerToken,
} from '../helpers/factories.ts';
import {
  advanceBody,
  advancesOf,
  createPaidWorker,
  moneyFootprint,
  type PaidWorker,
  postTransfer,
} from '../helpers/money.ts';
import { operatorClient } from '../helpers/operator.ts';

const JSON_API = 'application/vnd.api+json';
const NOW = new Date('2026-03-11T15:30:00.000Z');

type Body = Record<string, unknown>;
type Answer = { statusCode: number; body: string; json(): { errors: { code: string; source: unknown }[] } };

/** A copy of `body` with `name: value` added to the object at `path` (JSON pointer segments). */
function withMember(body: Body, path: string[], name: string, value: unknown = 'x'): Body {
  const copy = structuredClone(body);
  let node = copy as Record<string, unknown>;
  for (const segment of path) node = node[segment] as Record<string, unknown>;
  node[name] = value;
  return copy;
}

/** Every level of a body gets an unknown member in turn; each is refused by name and leaves nothing written. */
async function assertEachRefused(
  send: (body: Body) => Promise<Answer>,
  body: Body,
  levels: [path: string[], name: string][],
  footprint: () => Promise<unknown>,
) {
  const before = await footprint();
  for (const [path, name] of levels) {
    const response = await send(withMember(body, path, name));
    const pointer = `/${[...path, name].join('/')}`;
    assert.equal(response.statusCode, 400, `${pointer}: ${response.body}`);
    const [error] = response.json().errors;
    assert.equal(error!.code, 'INVALID_PARAMETERS', pointer);
    assert.deepEqual(error!.source, { pointer }, pointer);
  }
  assert.deepEqual(await footprint(), before, 'nothing was written');
}

async function paidWorker(t: TestContext): Promise<{ app: TestApp; worker: PaidWorker }> {
  const app = await buildTestApp(t, {}, { now: () => NOW });
  return { app, worker: await createPaidWorker(app, { earnedMinor: 40_000, now: NOW }) };
}

test('POST /rest/transfers refuses status, fee, memo and any other member at every level', async (t) => {
  const { app, worker } = await paidWorker(t);
  const body = advanceBody(worker);
  await assertEachRefused(
    (sent) => postTransfer(app, worker.token, sent),
    body,
    [
      [[], 'included'],
      [[], 'links'],
      [['data'], 'status'],
      [['data', 'attributes'], 'status'],
      [['data', 'attributes'], 'fee'],
      [['data', 'attributes'], 'memo'],
      [['data', 'relationships'], 'funding_source'],
      [['data', 'relationships', 'origin'], 'links'],
      [['data', 'relationships', 'origin', 'data'], 'amount'],
      [['data', 'relationships', 'destination', 'data'], 'name'],
    ],
    () => moneyFootprint(app, worker),
  );
  assert.deepEqual(await advancesOf(app, worker), []);
});

test("POST /rest/transfers keeps the client's own data.id, and accepts and ignores JSON:API meta", async (t) => {
  const { app, worker } = await paidWorker(t);
  const id = crypto.randomUUID();
  const body = { ...advanceBody(worker), meta: { client: 'app 2.1' } };
  (body.data as Body).id = id;
  (body.data as Body).meta = { screen: 'advance' };
  const response = await postTransfer(app, worker.token, body);
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.json().data.id, id);
  assert.equal(response.json().meta, undefined);
});

test('POST /rest/accounts refuses data.id (the server names accounts) and unknown members, details included', async (t) => {
  const app = await buildTestApp(t);
  const worker = await createWorker(app, await createOrganization(app));
  const api = restClient(app, await workerToken(app, worker.personId));
  const body = bankAccountBody(worker.personId);
  const accounts = () =>
    app.database.db.selectFrom('accounts').select('id').where('person_id', '=', worker.personId).execute();
  await assertEachRefused(
    (sent) => api.post('/rest/accounts', sent),
    body,
    [
      [[], 'jsonapi'],
      [['data'], 'id'],
      [['data', 'attributes'], 'verification_status'],
      [['data', 'attributes', 'details'], 'nickname'],
      [['data', 'relationships'], 'organization'],
      [['data', 'relationships', 'person'], 'meta'],
      [['data', 'relationships', 'person', 'data'], 'email'],
    ],
    accounts,
  );
  const created = await api.post('/rest/accounts', { ...body, meta: { any: 'thing' } });
  assert.equal(created.statusCode, 200, created.body);
});

test('POST /rest/accounts: an unknown detail of a card is INVALID_PARAMETERS too', async (t) => {
  const app = await buildTestApp(t);
  const worker = await createWorker(app, await createOrganization(app));
  const api = restClient(app, await workerToken(app, worker.personId));
  const details = {
    token: 'not-checked-before-the-fields',
    first_name: 'Robin',
    last_name: 'Lee',
    expiration_month: '02',
    expiration_year: '2030',
    address_line_one: '1 Main St',
    address_city: 'Albany',
    address_state: 'NY',
    address_zip_code: '12207',
    address_country: 'US',
    cvv: '123',
  };
  const response = await api.post('/rest/accounts', {
    data: {
      type: 'accounts',
      attributes: { name: 'Debit', account_type: 'CARD', subtype: 'DEBIT', details },
      relationships: { person: { data: { type: 'people', id: worker.personId } } },
    },
  });
  assert.equal(response.statusCode, 400, response.body);
  const [error] = response.json().errors;
  assert.equal(error.code, 'INVALID_PARAMETERS');
  assert.deepEqual(error.source, { pointer: '/data/attributes/details/cvv' });
});

test('PATCH /rest/people/{id} refuses unknown members at every level', async (t) => {
  const app = await buildTestApp(t);
  const worker = await createWorker(app, await createOrganization(app));
  const api = restClient(app, await workerToken(app, worker.personId));
  const url = `/rest/people/${worker.personId}`;
  const body = { data: { type: 'people', id: worker.personId, attributes: { state_of_residence: 'NY' } } };
  const person = () =>
    app.database.db
      .selectFrom('people')
      .selectAll()
      .where('id', '=', worker.personId)
      .executeTakeFirstOrThrow();
  await assertEachRefused(
    (sent) => api.patch(url, sent),
    body,
    [
      [[], 'links'],
      [['data'], 'relationships'],
      [['data'], 'links'],
      [['data', 'attributes'], 'disallow_reason'],
      [['data', 'attributes'], 'email'],
    ],
    person,
  );
  const patched = await api.patch(url, { ...body, meta: { reason: 'moved' } });
  assert.equal(patched.statusCode, 200, patched.body);
});

test('PATCH /rest/jobs/{id} refuses unknown members at every level', async (t) => {
  const { app, worker } = await paidWorker(t);
  const url = `/rest/jobs/${worker.jobId}`;
  const body = {
    data: {
      type: 'jobs',
      id: worker.jobId,
      attributes: { activation_status: 'DEACTIVATED' },
      relationships: {
        direct_deposit_default_depository: { data: { type: 'accounts', id: worker.depositoryId } },
      },
    },
  };
  const job = () =>
    app.database.db.selectFrom('jobs').selectAll().where('id', '=', worker.jobId).executeTakeFirstOrThrow();
  await assertEachRefused(
    (sent) => worker.api.patch(url, sent),
    body,
    [
      [[], 'included'],
      [['data'], 'links'],
      [['data', 'attributes'], 'wage_rate'],
      [['data', 'relationships'], 'person'],
      [['data', 'relationships', 'direct_deposit_default_depository'], 'links'],
      [['data', 'relationships', 'direct_deposit_default_depository', 'data'], 'subtype'],
    ],
    job,
  );
});

test('/admin bodies refuse unknown members at every level, policy included', async (t) => {
  const app = await buildTestApp(t);
  const { token } = await operatorClient(app);
  const send = (method: 'POST' | 'PATCH', url: string) => (body: Body) =>
    app.api.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}`, 'content-type': JSON_API },
      payload: JSON.stringify(body),
    });
  const organizationId = await createOrganization(app);
  const organizations = () => app.database.db.selectFrom('organizations').selectAll().execute();
  const policies = () => app.database.db.selectFrom('organization_policies').selectAll().execute();
  await assertEachRefused(
    send('POST', '/admin/organizations'),
    { data: { type: 'organizations', attributes: { name: 'Zenith', policy: { access_rate_bp: 5000 } } } },
    [
      [[], 'links'],
      [['data'], 'id'],
      [['data', 'attributes'], 'created_at'],
      [['data', 'attributes', 'policy'], 'bonus_bp'],
    ],
    organizations,
  );
  await assertEachRefused(
    send('PATCH', `/admin/organizations/${organizationId}/policy`),
    { data: { type: 'organization_policies', attributes: { access_rate_bp: 5000 } } },
    [
      [[], 'included'],
      [['data'], 'relationships'],
      [['data', 'attributes'], 'bonus_bp'],
    ],
    policies,
  );
});

test('the OpenAPI document shows every request body closed, with meta accepted at the top and on the resource', async (t) => {
  const { api } = await buildTestApp(t);
  const document = (
    await api.inject({ url: '/rest/openapi.json', headers: { accept: 'application/json' } })
  ).json();
  const open: string[] = [];
  type Schema = Record<string, unknown> & { properties?: Record<string, Schema> };
  const walk = (schema: Schema, where: string) => {
    const properties = schema.properties;
    if (properties) {
      if (schema.additionalProperties === undefined || schema.additionalProperties === true) open.push(where);
      for (const [name, child] of Object.entries(properties)) walk(child, `${where}/${name}`);
    }
    for (const keyword of ['anyOf', 'oneOf'])
      for (const child of (schema[keyword] as Schema[] | undefined) ?? []) walk(child, `${where}/${keyword}`);
    if (schema.items) walk(schema.items as Schema, `${where}/items`);
  };
  let bodies = 0;
  type Operation = { requestBody?: { content?: Record<string, { schema: Schema }> } };
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Operation>>)) {
    for (const [method, operation] of Object.entries(item)) {
      const content = operation.requestBody?.content?.[JSON_API];
      if (!content) continue;
      bodies++;
      walk(content.schema, `${method.toUpperCase()} ${path}`);
      assert.ok(content.schema.properties?.meta, `${method} ${path}: meta at the top`);
      assert.ok(content.schema.properties?.data?.properties?.meta, `${method} ${path}: meta on the resource`);
    }
  }
  assert.equal(
    bodies,
    26,
    'transfers, accounts, people, jobs, three /admin bodies (an organization, its policy, invitations), the four of webhook endpoints on /rest and /admin, the sandbox clock and reset, the two of compliance rules, a disclosure acceptance and a publication, a complaint opened and changed, an overpayment resolution on /rest and on /admin, a returned item repaid',
  );
  // A transfer's resource meta reads one member (disclosure_acknowledged) and accepts and ignores the others, as
  // JSON:API's meta is everywhere.
  assert.deepEqual(open, ['POST /rest/transfers/data/meta']);
});
