import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp } from '../helpers/build-test-app.ts';
import { assertErrorAnswer } from '../helpers/error-shape.ts';
import { createOrganization, createWorker, workerToken } from '../helpers/factories.ts';
import { operatorClient } from '../helpers/operator.ts';

test('a body nested too deep or holding too many values is 400 before it is parsed, on /rest and /admin; nothing is written', async (t) => {
  const app = await buildTestApp(t);
  const organizationId = await createOrganization(app);
  const worker = await createWorker(app, organizationId);
  const token = await workerToken(app, worker.personId);
  const operator = await operatorClient(app);
  const transfers = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from transfers`.execute(app.database.db)).rows[0]!.n;
  const before = await transfers();
  const bodies = {
    'nests deeper than 32 levels': `${'['.repeat(200_000)}${']'.repeat(200_000)}`,
    'holds more than 10000 values': `{"data":{"type":"transfers","attributes":{"amount":[${Array(200_000).fill('1').join(',')}]}}}`,
  };
  for (const [what, payload] of Object.entries(bodies)) {
    const rest = await app.api.inject({
      method: 'POST',
      url: '/rest/transfers',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/vnd.api+json',
        'idempotency-key': randomUUID(),
      },
      payload,
    });
    const refused = assertErrorAnswer(rest, 400, 'INVALID_USER_INPUT', { source: { pointer: '' } });
    assert.equal(refused.detail, `The request body ${what}: no request of this API needs that much.`);
    const admin = await app.api.inject({
      method: 'POST',
      url: '/admin/organizations',
      headers: { authorization: `Bearer ${operator.token}`, 'content-type': 'application/vnd.api+json' },
      payload,
    });
    assertErrorAnswer(admin, 400, 'INVALID_USER_INPUT', { source: { pointer: '' } });
  }
  assert.equal(await transfers(), before);
});
