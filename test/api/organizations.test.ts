import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { AppError } from '../../src/errors/app-error.ts';
import { changeClientOrganizations } from '../../src/oauth/clients.ts';
import { parseFilterQuery } from '../../src/platform/filter-query.ts';
import { ORGANIZATION_FILTER_FIELDS } from '../../src/resources/organizations/store.ts';
import { BASE_URL, buildTestApp, type TestApp } from '../helpers/build-test-app.ts';
import { assertMatchesReference } from '../helpers/contract.ts';
import { clientToken, createTestClient, createTestPerson, userToken } from '../helpers/tokens.ts';

async function organization(app: TestApp, name: string): Promise<string> {
  const id = randomUUID();
  await app.database.db.insertInto('organizations').values({ id, name }).execute();
  return id;
}

/** Three organizations, a client linked to two of them, and its client:admin token. */
async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const app = await buildTestApp(t);
  const tag = randomUUID().slice(0, 8);
  const acme = await organization(app, `Acme Logistics ${tag}`);
  const acorn = await organization(app, `Acorn Foods ${tag}`);
  const other = await organization(app, `Zenith Retail ${tag}`);
  const client = await createTestClient(app, { organizationIds: [acme, acorn] });
  const token = await clientToken(app, ['client:admin'], client);
  const get = (url: string, bearer = token) =>
    app.api.inject({ url, headers: { authorization: `Bearer ${bearer}` } });
  return { app, tag, acme, acorn, other, client, token, get };
}

test('GET /rest/organizations lists only the organizations linked to the client', async (t) => {
  const { get, acme, acorn } = await setup(t);
  const response = await get('/rest/organizations');
  assert.equal(response.statusCode, 200);
  assert.equal(response.headers['content-type'], 'application/vnd.api+json');
  const body = response.json();
  assertMatchesReference('OrganizationsData', body);
  assert.deepEqual(
    body.data.map((resource: { id: string }) => resource.id),
    [acme, acorn],
    'linked ones only, by name',
  );
  assert.deepEqual(body.data[0].attributes.products, ['ODP']);
  assert.equal(body.data[0].links.self, `${BASE_URL}/rest/organizations/${acme}`);
});

test('GET /rest/organizations/{id}: linked is 200, another tenant or a malformed id is 404 RECORD_NOT_FOUND', async (t) => {
  const { get, acme, other } = await setup(t);
  const found = await get(`/rest/organizations/${acme}`);
  assert.equal(found.statusCode, 200);
  assertMatchesReference('OrganizationData', found.json());
  for (const id of [other, randomUUID(), 'not-a-uuid']) {
    const response = await get(`/rest/organizations/${id}`);
    assert.equal(response.statusCode, 404, id);
    assert.equal(response.json().errors[0].code, 'RECORD_NOT_FOUND');
    assert.doesNotMatch(response.body, /Zenith/);
  }
});

test('only client tokens with client:admin; user tokens and other scopes are 403', async (t) => {
  const { app, get, client } = await setup(t);
  const lookup = await clientToken(app, ['client:lookup'], client);
  assert.equal((await get('/rest/organizations', lookup)).statusCode, 403);
  const person = await createTestPerson(app);
  const user = await userToken(app, person, ['user:read'], client.clientId);
  assert.equal((await get('/rest/organizations', user)).statusCode, 403);
  assert.equal((await app.api.inject({ url: '/rest/organizations' })).statusCode, 401);
});

test("a client's links changed by the operator change what its token sees at once, the token unchanged", async (t) => {
  const { app, get, acme, acorn, other, client } = await setup(t);
  const ids = async () =>
    (await get('/rest/organizations')).json().data.map((resource: { id: string }) => resource.id);
  await changeClientOrganizations(app.database.db, client.clientId, { link: [other], unlink: [acorn] });
  assert.deepEqual(await ids(), [acme, other]);
  assert.equal((await get(`/rest/organizations/${acorn}`)).statusCode, 404, 'unlinked: as any other tenant');
  assert.equal((await get(`/rest/organizations/${other}`)).statusCode, 200);
});

test('the deprecated filter: exact, partial, AND, OR and parentheses', async (t) => {
  const { get, tag, acme, acorn } = await setup(t);
  const ids = async (filter: string) => {
    const response = await get(`/rest/organizations?filter=${encodeURIComponent(filter)}`);
    assert.equal(response.statusCode, 200, `${filter}: ${response.body}`);
    return response.json().data.map((resource: { id: string }) => resource.id);
  };
  assert.deepEqual(await ids(`name:"Acme Logistics ${tag}"`), [acme]);
  assert.deepEqual(await ids('name:"Acme Logistics"'), [], 'exact means exact');
  assert.deepEqual(await ids('name~"ac"'), [acme, acorn], 'partial, any case');
  assert.deepEqual(await ids(`name~"Acme" AND name~"${tag}"`), [acme]);
  assert.deepEqual(await ids('name~"Acme" OR name~"Acorn"'), [acme, acorn]);
  assert.deepEqual(await ids(`(name~"Acme" OR name~"Acorn") AND name:"Acorn Foods ${tag}"`), [acorn]);
  assert.deepEqual(await ids('name~"Zenith"'), [], 'other tenants stay out of filters too');
  assert.deepEqual(await ids('name~"100%_"'), [], '% and _ are literal');
  assert.deepEqual(
    await ids(''),
    [acme, acorn],
    "an empty filter, the description's example, filters nothing",
  );
});

test('bad filters are clear 400s naming the problem', async (t) => {
  const { get } = await setup(t);
  const cases: [string, string, RegExp][] = [
    ['name="Acme"', 'INVALID_FILTER_QUERY', /Unexpected "="/],
    ['name:"Acme', 'INVALID_FILTER_QUERY', /not closed/],
    ['name:"A" AND', 'INVALID_FILTER_QUERY', /Expected a field name at the end/],
    ['(name:"A"', 'INVALID_FILTER_QUERY', /Expected \)/],
    ['name:"A" name:"B"', 'INVALID_FILTER_QUERY', /Expected AND, OR or the end/],
    ['  ', 'INVALID_FILTER_QUERY', /empty/],
    ['city:"Paris"', 'INVALID_FILTER_FIELD', /by name only, not city/],
  ];
  for (const [filter, code, detail] of cases) {
    const response = await get(`/rest/organizations?filter=${encodeURIComponent(filter)}`);
    assert.equal(response.statusCode, 400, filter);
    const [error] = response.json().errors;
    assert.equal(error.code, code, filter);
    assert.match(error.detail, detail, filter);
    assert.deepEqual(error.source, { parameter: 'filter' });
  }
});

test('the filter parser never throws anything but AppError', () => {
  const inputs = [
    '(((',
    ')',
    'AND',
    'name',
    'name:',
    'name~~"x"',
    '"x"',
    'name:"a\\"b"',
    `${'('.repeat(30)}name:"x"${')'.repeat(30)}`,
  ];
  for (const input of inputs) {
    try {
      parseFilterQuery(input, ORGANIZATION_FILTER_FIELDS, 'Organizations');
    } catch (error) {
      assert.ok(error instanceof AppError, input);
    }
  }
  assert.deepEqual(parseFilterQuery('name:"a\\"b"', ORGANIZATION_FILTER_FIELDS, 'Organizations'), {
    kind: 'match',
    field: 'name',
    operator: 'equals',
    value: 'a"b',
  });
});
