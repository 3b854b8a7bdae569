import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { BASE_URL, buildTestApp, type TestApp } from '../helpers/build-test-app.ts';
import { assertErrorAnswer } from '../helpers/error-shape.ts';
import {
  createOrganization,
  createWorker,
  linkedClientToken,
  restClient,
  workerToken,
} from '../helpers/factories.ts';
import { clientToken, createTestClient } from '../helpers/tokens.ts';

/**
 * Cursor pagination of every list (an extension): page[size] and page[after], links.next while more follow. Each
 * list is given a known set of items whose sort keys tie (the id breaks the tie) and differ by a microsecond (the
 * cursor keeps the database's precision), and a filter that leaves some out.
 */

// Sort keys, oldest first: two ties, and two instants a microsecond apart (a JavaScript Date cannot tell them apart).
const INSTANTS = [
  '2026-01-05T10:00:00.000001Z',
  '2026-01-05T10:00:00.000001Z',
  '2026-01-05T10:00:00.000002Z',
  '2026-01-06T08:00:00Z',
  '2026-01-06T08:00:00Z',
  '2026-01-07T00:00:00.5Z',
  '2026-01-08T00:00:00Z',
];

type Api = ReturnType<typeof restClient>;

interface ListCase {
  name: string;
  api: Api;
  /** The list's path with its filters. */
  url: string;
  /** Every item the filtered list holds, in the list's order. */
  expected: string[];
  /** Its sort key is text, not an instant. */
  textKey?: boolean;
  /** It pages by page[offset] and page[limit] too (the operator's organizations, before cursors). */
  offsetPaging?: boolean;
}

/** Ids in the list's order: by sort key, then by id (PostgreSQL orders uuids as their lower-case text). */
function inOrder(items: { key: string; id: string }[], compare: (a: string, b: string) => number): string[] {
  return [...items]
    .sort((a, b) => compare(a.key, b.key) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((item) => item.id);
}
const byInstant = (a: string, b: string) => Date.parse(a) - Date.parse(b) || (a < b ? -1 : a > b ? 1 : 0);
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

async function world(t: TestContext) {
  const app = await buildTestApp(t);
  const { db } = app.database;
  const tag = randomUUID().slice(0, 8);

  // Organizations linked to one client, by name: two of the same name, one the filter leaves out.
  const names = [`Pg ${tag} B`, `Pg ${tag} A`, `Pg ${tag} B`, `Pg ${tag} D`, `Pg ${tag} C`, `Other ${tag}`];
  const organizations = [];
  for (const name of names) organizations.push({ key: name, id: await createOrganization(app, { name }) });
  const unlinked = await createOrganization(app, { name: `Pg ${tag} unlinked` });
  const linked = await linkedClientToken(
    app,
    organizations.map((organization) => organization.id),
    ['client:admin'],
  );

  // One person with a job (and its earnings balance account) at each organization.
  const first = await createWorker(app, organizations[0]!.id, { group: 'KEEP' });
  const workers = [first];
  for (const [index, organization] of organizations.slice(1).entries())
    workers.push(
      await createWorker(app, organization.id, {
        personId: first.personId,
        group: index + 1 === 2 ? 'OTHER' : 'KEEP',
      }),
    );
  await createWorker(app, unlinked, { personId: first.personId, group: 'KEEP' });
  const jobs = [];
  const accounts = [];
  for (const [index, worker] of workers.entries()) {
    const at = INSTANTS[index]!;
    await db.updateTable('jobs').set({ created_at: at }).where('id', '=', worker.jobId).execute();
    await db
      .updateTable('accounts')
      .set({ created_at: at, name: index === 4 ? 'Other' : 'Keep balance' })
      .where('id', '=', worker.balanceAccountId!)
      .execute();
    if (index !== 2) jobs.push({ key: at, id: worker.jobId });
    if (index !== 4) accounts.push({ key: at, id: worker.balanceAccountId! });
  }
  // The job at the unlinked organization is the person's too: it is in the person's list.
  const extra = await db
    .selectFrom('jobs')
    .select(['id', 'earnings_balance_account_id'])
    .where('person_id', '=', first.personId)
    .where('organization_id', '=', unlinked)
    .executeTakeFirstOrThrow();
  await db.updateTable('jobs').set({ created_at: INSTANTS[6] }).where('id', '=', extra.id).execute();
  await db
    .updateTable('accounts')
    .set({ created_at: INSTANTS[6], name: 'Keep balance' })
    .where('id', '=', extra.earnings_balance_account_id!)
    .execute();
  jobs.push({ key: INSTANTS[6]!, id: extra.id });
  accounts.push({ key: INSTANTS[6]!, id: extra.earnings_balance_account_id! });

  // Paychecks: one a job and pay period, pay periods that tie across jobs; a DEPOSITED one the filter leaves out.
  const paychecks = [];
  for (const [index, worker] of workers.entries()) {
    const id = randomUUID();
    const starts = INSTANTS[index]!;
    await db
      .insertInto('paychecks')
      .values({
        id,
        job_id: worker.jobId,
        person_id: first.personId,
        status: index === 3 ? 'DEPOSITED' : 'ESTIMATED',
        pay_period_starts_at: starts,
        pay_period_ends_at: '2026-02-01T00:00:00Z',
        deposit_expected_at: '2026-02-03T00:00:00Z',
      })
      .execute();
    if (index !== 3) paychecks.push({ key: starts, id });
  }

  // Transfers from the first earnings balance; the filter (submitted after noon of the first day) leaves three out.
  const transfers = [];
  const cut = '2026-01-05T12:00:00Z';
  for (const at of INSTANTS) {
    const id = await insertTransfer(app, first.personId, first.balanceAccountId!, at);
    if (Date.parse(at) > Date.parse(cut)) transfers.push({ key: at, id });
  }

  // Webhook endpoints of the client (and one of another client, which only the operator sees), and the delivery
  // log of one of them: two events, the filter keeps the first.
  const endpoints = [];
  const operatorClient = await createTestClient(app, { scopes: ['admin:operator'], redirectUris: [] });
  const operatorToken = await clientToken(app, ['admin:operator'], operatorClient);
  for (const [index, at] of INSTANTS.entries()) {
    const id = randomUUID();
    await db
      .insertInto('webhook_endpoints')
      .values({
        id,
        client_id: index === 5 ? operatorClient.clientId : linked.client.clientId,
        url: `https://receiver.example/${index}`,
        created_at: at,
        updated_at: at,
      })
      .execute();
    if (index !== 5) endpoints.push({ key: at, id });
  }
  const endpointId = endpoints[0]!.id;
  const events = [randomUUID(), randomUUID()];
  for (const event of events)
    await sql`insert into webhook_events (id, type, audience, resource_type, resource_id, occurred_at, data)
      values (${event}::uuid, 'webhook.test', 'ORGANIZATION', 'jobs', ${event}::uuid, now(), '{}')`.execute(
      db,
    );
  const deliveries = [];
  for (const [index, at] of [...INSTANTS, ...INSTANTS.slice(0, 3)].entries()) {
    const id = randomUUID();
    await db
      .insertInto('webhook_deliveries')
      .values({
        id,
        event_id: events[index % 4 === 3 ? 1 : 0]!,
        endpoint_id: endpointId,
        attempt: index + 1,
        attempted_at: at,
        duration_ms: 5,
        status_code: 500,
        outcome: 'FAILED',
      })
      .execute();
    if (index % 4 !== 3) deliveries.push({ key: at, id });
  }

  const person = restClient(app, await workerToken(app, first.personId));
  const client = restClient(app, linked.token);
  const operator = restClient(app, operatorToken);
  // What the operator's lists hold: every row of the database, in the lists' order as PostgreSQL sorts it.
  const allEndpoints = await db
    .selectFrom('webhook_endpoints')
    .select('id')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const allOrganizations = await db
    .selectFrom('organizations')
    .select('id')
    .orderBy('name')
    .orderBy('id')
    .execute();
  const latestFirst = inOrder(deliveries, (a, b) => byInstant(b, a));
  const cases: ListCase[] = [
    {
      name: 'organizations',
      api: client,
      url: `/rest/organizations?filter=${encodeURIComponent(`name~"Pg ${tag}"`)}`,
      expected: inOrder(organizations.slice(0, 5), byText),
      textKey: true,
    },
    {
      name: 'jobs',
      api: person,
      url: '/rest/jobs?filter[external_identifiers.group]=KEEP',
      expected: inOrder(jobs, byInstant),
    },
    {
      name: 'accounts',
      api: person,
      url: `/rest/accounts?filter[account_type]=EARNINGS_BALANCE&filter=${encodeURIComponent('name~"Keep"')}`,
      expected: inOrder(accounts, byInstant),
    },
    {
      name: 'paychecks',
      api: person,
      url: '/rest/paychecks?filter[status]=ESTIMATED',
      expected: inOrder(paychecks, byInstant),
    },
    {
      name: 'transfers',
      api: person,
      url: `/rest/transfers?filter[submitted_at__gt]=${encodeURIComponent(cut)}&include=estimated_funding_sources`,
      expected: inOrder(transfers, byInstant),
    },
    {
      name: 'webhook endpoints',
      api: client,
      url: '/rest/webhook_endpoints',
      expected: inOrder(endpoints, byInstant),
    },
    {
      name: 'webhook deliveries',
      api: client,
      url: `/rest/webhook_endpoints/${endpointId}/deliveries?event_id=${events[0]}`,
      expected: latestFirst,
    },
    {
      name: 'operator: webhook endpoints',
      api: operator,
      url: '/admin/webhook_endpoints',
      expected: allEndpoints.map((row) => row.id),
    },
    {
      name: 'operator: webhook deliveries',
      api: operator,
      url: `/admin/webhook_endpoints/${endpointId}/deliveries?event_id=${events[0]}`,
      expected: latestFirst,
    },
    {
      name: 'operator: organizations',
      api: operator,
      url: '/admin/organizations',
      expected: allOrganizations.map((row) => row.id),
      textKey: true,
      offsetPaging: true,
    },
  ];
  return { app, person, client, first, cases };
}

async function insertTransfer(app: TestApp, personId: string, originId: string, at: string): Promise<string> {
  const id = randomUUID();
  await app.database.db
    .insertInto('transfers')
    .values({
      id,
      person_id: personId,
      origin_account_id: originId,
      destination_account_id: originId,
      amount_minor: 100,
      currency: 'USD',
      schedule: 'NEXT_BUSINESS_DAY',
      submitted_at: at,
    })
    .execute();
  return id;
}

/** A page: its ids and the path of its links.next (checked to be absolute, from the public URL). */
async function getPage(api: Api, url: string): Promise<{ ids: string[]; next: string | undefined }> {
  const response = await api.get(url);
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  const body = response.json() as { data: { id: string }[]; links?: { next?: string } };
  const next = body.links?.next;
  if (next !== undefined) assert.match(next, new RegExp(`^${BASE_URL}/(rest|admin)/`));
  return { ids: body.data.map((item) => item.id), next: next?.slice(BASE_URL.length) };
}

function withQuery(url: string, parameters: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}${parameters}`;
}

test('every list, walked in pages of 1, 2 and 3, gives each item once, in its order, with its filters', async (t) => {
  const { cases } = await world(t);
  for (const { name, api, url, expected } of cases) {
    assert.ok(expected.length >= 4, `${name}: a set worth paging`);
    // No page parameter: everything, in one answer with no links.next, as before.
    const whole = await getPage(api, url);
    assert.deepEqual(whole.ids, expected, `${name}: the whole list in its order`);
    assert.equal(whole.next, undefined, `${name}: everything fits`);
    assert.deepEqual((await getPage(api, withQuery(url, 'page[size]=1000'))).ids, expected);
    for (const size of [1, 2, 3]) {
      const seen: string[] = [];
      let pages = 0;
      let next: string | undefined = withQuery(url, `page[size]=${size}`);
      while (next !== undefined) {
        const page = await getPage(api, next);
        pages++;
        assert.ok(page.ids.length <= size, `${name}: a page holds at most ${size}`);
        if (page.next !== undefined) {
          assert.equal(page.ids.length, size, `${name}: only the last page is short`);
          const parameters = new URL(page.next, BASE_URL).searchParams;
          assert.equal(parameters.get('page[size]'), String(size), `${name}: the next page keeps the size`);
          for (const [key, value] of new URL(url, BASE_URL).searchParams)
            assert.equal(parameters.get(key), value, `${name}: the next page keeps ${key}`);
        }
        seen.push(...page.ids);
        next = page.next;
        assert.ok(pages <= expected.length + 1, `${name}: the walk ends`);
      }
      assert.deepEqual(seen, expected, `${name}, pages of ${size}`);
      assert.equal(pages, Math.ceil(expected.length / size), `${name}: no empty last page`);
    }
    // A page size of exactly the list's length: one page, no links.next.
    const exact = await getPage(api, withQuery(url, `page[size]=${expected.length}`));
    assert.deepEqual(exact.ids, expected);
    assert.equal(exact.next, undefined, `${name}: links.next is absent when nothing follows`);
  }
});

test('page[size], page[after] and other page members are checked: 400 INVALID_PARAMETERS naming the parameter', async (t) => {
  const { cases } = await world(t);
  const cursors = new Map<string, string>();
  for (const { name, api, url } of cases) {
    const { next } = await getPage(api, withQuery(url, 'page[size]=1'));
    cursors.set(name, new URL(next!, BASE_URL).searchParams.get('page[after]')!);
  }
  for (const [index, { name, api, url }] of cases.entries()) {
    const refused = async (query: string, parameter: string) =>
      assertErrorAnswer(await api.get(withQuery(url, query)), 400, 'INVALID_PARAMETERS', {
        source: { parameter },
      });
    for (const size of ['0', '1001', 'x', '1.5', '-1', '', '01', '1e2'])
      await refused(`page[size]=${encodeURIComponent(size)}`, 'page[size]');
    await refused('page[size]=1&page[size]=2', 'page[size]');
    const json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const own = JSON.parse(Buffer.from(cursors.get(name)!, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    for (const garbage of [
      'garbage',
      '!!!',
      json([]),
      json(null),
      json({ ...own, i: 'not-a-uuid' }),
      json({ ...own, k: 42 }),
      json({ ...own, k: cases[index]!.textKey ? 1 : '2026-13-01T00:00:00.000000Z' }),
      // Keys no name can be: a NUL (PostgreSQL refuses it: it was a 500), a lone surrogate, a bidi control.
      json({ ...own, k: 'a\u0000' }),
      json({ ...own, k: '\ud800' }),
      json({ ...own, k: 'a\u202e' }),
      // A year Date takes and PostgreSQL has not (it was a 500 on every list ordered by time).
      json({ ...own, k: cases[index]!.textKey ? 1 : '0000-01-01T00:00:00.000000Z' }),
      cursors.get(name)!.slice(0, -3),
    ])
      await refused(`page[after]=${encodeURIComponent(garbage)}`, 'page[after]');
    const other = cases[(index + 1) % cases.length]!.name;
    await refused(`page[after]=${cursors.get(other)}`, 'page[after]');
    await refused(`page[after]=${cursors.get(name)}&page[after]=${cursors.get(name)}`, 'page[after]');
    await refused('page[number]=2', 'page[number]');
    if (cases[index]!.offsetPaging) {
      await refused(`page[offset]=1&page[after]=${cursors.get(name)}`, 'page[after]');
      await refused('page[limit]=1&page[size]=1', 'page[size]');
    } else await refused('page[offset]=1', 'page[offset]');
  }
});

test('an item added between two pages, before or after the cursor, is neither skipped nor repeated', async (t) => {
  const { app, cases, first } = await world(t);
  const transfers = cases.find((item) => item.name === 'transfers')!;
  const url = '/rest/transfers';
  const expected = (await getPage(transfers.api, url)).ids;
  const firstPage = await getPage(transfers.api, withQuery(url, 'page[size]=3'));
  assert.deepEqual(firstPage.ids, expected.slice(0, 3));
  const cursorId = firstPage.ids[2]!;
  // Sort keys tied with the cursor's item, copied in SQL to keep its microseconds; ids below and above its id.
  const tied = async (id: string) => {
    await sql`insert into transfers (id, person_id, origin_account_id, destination_account_id, amount_minor,
        currency, schedule, submitted_at)
      select ${id}::uuid, person_id, origin_account_id, destination_account_id, 100, 'USD', 'NEXT_BUSINESS_DAY',
        submitted_at from transfers where id = ${cursorId}::uuid`.execute(app.database.db);
    return id;
  };
  const earliest = await insertTransfer(app, first.personId, first.balanceAccountId!, '2025-12-31T00:00:00Z');
  const tiedBefore = await tied('00000000-0000-4000-8000-000000000001');
  const tiedAfter = await tied('ffffffff-ffff-4fff-bfff-fffffffffffe');
  const latest = await insertTransfer(app, first.personId, first.balanceAccountId!, '2027-01-01T00:00:00Z');
  const seen = [...firstPage.ids];
  let next = firstPage.next;
  while (next !== undefined) {
    const page = await getPage(transfers.api, next);
    seen.push(...page.ids);
    next = page.next;
  }
  assert.deepEqual(seen, [...expected.slice(0, 3), tiedAfter, ...expected.slice(3), latest]);
  assert.equal(new Set(seen).size, seen.length, 'no item twice');
  for (const id of [earliest, tiedBefore])
    assert.ok(!seen.includes(id), 'added before the cursor: not repeated');
  // A new walk sees them all in their places.
  const now = (await getPage(transfers.api, url)).ids;
  assert.deepEqual(now, [
    earliest,
    ...expected.slice(0, 2),
    tiedBefore,
    cursorId,
    tiedAfter,
    ...expected.slice(3),
    latest,
  ]);
});

test('the default answer is the whole list up to 1000, as before; the bound is the default page size', async (t) => {
  const { app, person, first } = await world(t);
  const rows = Array.from({ length: 1003 }, (_, index) => ({
    id: randomUUID(),
    person_id: first.personId,
    origin_account_id: first.balanceAccountId!,
    destination_account_id: first.balanceAccountId!,
    amount_minor: 100,
    currency: 'USD',
    schedule: 'NEXT_BUSINESS_DAY',
    submitted_at: new Date(Date.UTC(2026, 1, 1) + index * 1000).toISOString(),
  }));
  await app.database.db.insertInto('transfers').values(rows).execute();
  const all = await getPage(person, '/rest/transfers');
  assert.equal(all.ids.length, 1000);
  assert.ok(all.next, 'links.next leads on when more than 1000 match');
  const rest = await getPage(person, all.next);
  assert.equal(rest.ids.length, 1003 + 7 - 1000);
  assert.equal(rest.next, undefined);
  assert.equal(new Set([...all.ids, ...rest.ids]).size, 1010);
});

test('the OpenAPI document shows page[size] and page[after] on every list, as an extension, and links.next', async (t) => {
  const { api } = await buildTestApp(t);
  const document = (await api.inject({ url: '/rest/openapi.json' })).json();
  const lists = [
    '/rest/organizations',
    '/rest/jobs',
    '/rest/accounts',
    '/rest/paychecks',
    '/rest/transfers',
    '/rest/webhook_endpoints',
    '/rest/webhook_endpoints/{endpoint_id}/deliveries',
    '/admin/organizations',
    '/admin/webhook_endpoints',
    '/admin/webhook_endpoints/{endpoint_id}/deliveries',
    '/admin/disclosures',
  ];
  for (const path of lists) {
    const operation = document.paths[path].get;
    const parameters = operation.parameters as { name: string; in: string; description: string }[];
    for (const name of ['page[size]', 'page[after]']) {
      const parameter = parameters.find((item) => item.name === name);
      assert.ok(parameter, `${path} ${name}`);
      assert.equal(parameter.in, 'query');
      assert.match(parameter.description, /^An extension of the published API/);
    }
    assert.equal(operation['x-pagination'].extension, true, `${path} is marked`);
    const schema = operation.responses['200'].content['application/vnd.api+json'].schema;
    assert.ok(schema.properties.links.properties.next, `${path} links.next`);
    // The operator's organizations always had links (self); elsewhere links is there only with next.
    if (path !== '/admin/organizations')
      assert.ok(!(schema.required ?? []).includes('links'), `${path}: links is optional`);
    assert.ok(!(schema.properties.links.required ?? []).includes('next'), `${path}: next is optional`);
  }
});

test('the delivery log: 100 attempts a page by default, as before; limit is still read, as page[size]', async (t) => {
  const { cases } = await world(t);
  const { api, url, expected } = cases.find((item) => item.name === 'webhook deliveries')!;
  const path = url.split('?')[0]!;
  const limited = await getPage(api, `${path}?limit=2`);
  assert.equal(limited.ids.length, 2);
  assert.ok(limited.next);
  const parameters = new URL(limited.next, BASE_URL).searchParams;
  assert.equal(parameters.get('page[size]'), '2');
  assert.equal(parameters.get('limit'), null, 'the next page says page[size] only');
  assert.deepEqual((await getPage(api, limited.next)).ids.length, 2);
  for (const query of ['limit=2&page[size]=2', 'limit=0', 'limit=1001'])
    assertErrorAnswer(await api.get(`${path}?${query}`), 400, 'INVALID_PARAMETERS', {
      source: { parameter: 'limit' },
    });
  assert.ok(expected.length < 100);
});

test("the operator's organizations: page[offset] and page[limit] page as before; a cursor page has links.self too", async (t) => {
  const { cases } = await world(t);
  const { api, expected } = cases.find((item) => item.name === 'operator: organizations')!;
  const offset = (await api.get('/admin/organizations?page[offset]=1&page[limit]=2')).json();
  assert.deepEqual(
    offset.data.map((item: { id: string }) => item.id),
    expected.slice(1, 3),
  );
  assert.equal(offset.links.next, `${BASE_URL}/admin/organizations?page%5Boffset%5D=3&page%5Blimit%5D=2`);
  const cursor = (await api.get('/admin/organizations?page[size]=2')).json();
  assert.equal(cursor.links.self, `${BASE_URL}/admin/organizations?page%5Bsize%5D=2`);
  assert.match(cursor.links.next, /page%5Bafter%5D=/);
  const whole = (await api.get('/admin/organizations')).json();
  assert.deepEqual(whole.links, { self: `${BASE_URL}/admin/organizations` });
  for (const limit of ['0', '5000']) {
    const refusal = assertErrorAnswer(
      await api.get(`/admin/organizations?page[limit]=${limit}`),
      400,
      'INVALID_PARAMETERS',
      { source: { parameter: 'page[limit]' } },
    );
    assert.match(refusal.detail, /^page\[limit\] must be a whole number from 1 to \d+\.$/);
  }
});
