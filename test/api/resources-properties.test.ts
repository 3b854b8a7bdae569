import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { buildTestApp } from '../helpers/build-test-app.ts';
import { createOrganization, createWorker, linkedClientToken, workerToken } from '../helpers/factories.ts';

const SEED = Number(process.env.EWA_PROPERTY_SEED ?? 20_261_123);
const RUNS = Number(process.env.EWA_PROPERTY_RUNS ?? 150);

/** Values that are sometimes right and often wrong in every way JSON allows. */
function anyValue(...right: unknown[]) {
  return fc.oneof(
    fc.constantFrom(...right),
    fc.string({ maxLength: 40 }),
    fc.constantFrom(null, true, 0, -1, 1e308, '', ' ', 'ÿ\u0000', '1'.repeat(300), [], {}),
    fc.jsonValue({ maxDepth: 2 }),
  );
}

test('random filters and bodies on people, jobs and accounts never yield a 500 (fast-check)', async (t) => {
  const app = await buildTestApp(t);
  const organization = await createOrganization(app);
  const worker = await createWorker(app, organization);
  const userHeaders = {
    authorization: `Bearer ${await workerToken(app, worker.personId)}`,
    'content-type': 'application/vnd.api+json',
  };
  const clientHeaders = {
    authorization: `Bearer ${(await linkedClientToken(app, [organization], ['client:lookup', 'client:admin'])).token}`,
    'content-type': 'application/vnd.api+json',
  };
  const ids = [
    worker.personId,
    worker.jobId,
    worker.balanceAccountId!,
    'x',
    '00000000-0000-0000-0000-000000000000',
  ];
  const filterKeys = [
    'filter[person.id]',
    'filter[organization.id]',
    'filter[account_type]',
    'filter[subtype]',
    'filter[external_identifiers.group]',
    'filter[external_identifiers.employee_id__gt]',
    'filter',
    'filter[',
    'filter[]',
  ];
  const query = fc
    .array(
      fc.tuple(
        fc.oneof(fc.constantFrom(...filterKeys), fc.string({ maxLength: 12 })),
        fc.string({ maxLength: 40 }),
      ),
      {
        maxLength: 4,
      },
    )
    .map((pairs) =>
      pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&'),
    );
  const relationship = (type: string) =>
    fc.oneof(fc.record({ data: fc.record({ type: anyValue(type), id: anyValue(...ids) }) }), anyValue(null));
  const personBody = fc.record({
    data: fc.record({
      type: anyValue('people'),
      id: anyValue(...ids),
      attributes: fc.oneof(fc.record({ state_of_residence: anyValue('NY', 'DC', 'ZZ') }), anyValue({})),
    }),
  });
  const jobBody = fc.record({
    data: fc.record(
      {
        type: anyValue('jobs'),
        id: anyValue(...ids),
        attributes: fc.record(
          { activation_status: anyValue('DEACTIVATED', 'ACTIVATED') },
          { requiredKeys: [] },
        ),
        relationships: fc.record(
          {
            direct_deposit_default_depository: relationship('accounts'),
            direct_deposit_default_card: relationship('accounts'),
          },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: ['type'] },
    ),
  });
  const accountBody = fc.record({
    data: fc.record(
      {
        type: anyValue('accounts'),
        attributes: fc.record(
          {
            name: anyValue('Checking'),
            account_type: anyValue('DEPOSITORY', 'CARD', 'EARNINGS_BALANCE'),
            subtype: anyValue('CHECKING', 'SAVINGS', 'DEBIT', 'ODP'),
            details: fc.oneof(
              fc.record(
                {
                  first_name: anyValue('Robin'),
                  last_name: anyValue('Lee'),
                  routing_number: anyValue('110000000', '021000021'),
                  account_number: anyValue('12345678', '1234'),
                },
                { requiredKeys: [] },
              ),
              anyValue({}),
            ),
          },
          { requiredKeys: [] },
        ),
        relationships: fc.record({ person: relationship('people') }, { requiredKeys: [] }),
      },
      { requiredKeys: [] },
    ),
  });
  const request = fc.oneof(
    fc.record({
      method: fc.constant('GET'),
      path: fc.constantFrom('/rest/jobs', '/rest/accounts'),
      query,
      body: fc.constant(undefined),
    }),
    fc.record({
      method: fc.constant('GET'),
      path: fc.constantFrom(
        ...ids.flatMap((id) => [`/rest/people/${id}`, `/rest/jobs/${id}`, `/rest/accounts/${id}`]),
      ),
      query,
      body: fc.constant(undefined),
    }),
    fc.record({
      method: fc.constant('PATCH'),
      path: fc.constantFrom(...ids.map((id) => `/rest/people/${id}`)),
      query,
      body: personBody,
    }),
    fc.record({
      method: fc.constant('PATCH'),
      path: fc.constantFrom(...ids.map((id) => `/rest/jobs/${id}`)),
      query,
      body: jobBody,
    }),
    fc.record({ method: fc.constant('POST'), path: fc.constant('/rest/accounts'), query, body: accountBody }),
    fc.record({
      method: fc.constant('DELETE'),
      path: fc.constantFrom(...ids.map((id) => `/rest/accounts/${id}`)),
      query,
      body: fc.constant(undefined),
    }),
  );
  await fc.assert(
    fc.asyncProperty(request, fc.boolean(), async ({ method, path, query: search, body }, asClient) => {
      const response = await app.api.inject({
        method: method as 'GET',
        url: `${path}?${search}`,
        headers:
          method === 'DELETE' || method === 'GET'
            ? { authorization: (asClient ? clientHeaders : userHeaders).authorization }
            : asClient
              ? clientHeaders
              : userHeaders,
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      assert.ok(
        response.statusCode < 500,
        `${method} ${path}?${search} answered ${response.statusCode}: ${response.body}`,
      );
      if (response.statusCode >= 400) {
        const [error] = response.json().errors;
        assert.equal(error.status, String(response.statusCode));
        assert.ok(error.code && error.detail, response.body);
      }
    }),
    { seed: SEED, numRuns: RUNS },
  );
});
