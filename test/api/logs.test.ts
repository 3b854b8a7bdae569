import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REDACTED_FIELDS } from '../../src/platform/logger.ts';
import { buildTestApp } from '../helpers/build-test-app.ts';

const SECRETS = {
  authorization: 'Bearer eyJsecret-access-token',
  cookie: 'session=secret-cookie',
  card_number: '4111111111111111', // distinct enough: no timestamp or latency has 16 ones
  cvv: 'cvv-SECRET-987',
  account_number: 'acct-SECRET-000123456789',
  routing_number: 'routing-SECRET-110000000',
  token: 'eyJsecret-card-token',
  client_secret: 'secret-client-secret',
  password: 'correct horse battery staple',
};

test('log lines never carry secrets, at any depth the code logs them', async (t) => {
  const { api, logs } = await buildTestApp(t);
  api.log.info(SECRETS, 'top level');
  api.log.info({ body: SECRETS }, 'one level down');
  api.log.info({ request: { body: { details: SECRETS } } }, 'three levels down');
  await api.inject({
    url: '/rest/health?token=eyJsecret-card-token',
    headers: { authorization: SECRETS.authorization, cookie: SECRETS.cookie },
  });
  const text = JSON.stringify(logs);
  for (const secret of Object.values(SECRETS))
    assert.ok(!text.includes(secret), `a log line contains ${secret}`);
  assert.ok(text.includes('[REDACTED]'));
  for (const field of ['card_number', 'cvv', 'password']) assert.ok(REDACTED_FIELDS.includes(field as never));
});
