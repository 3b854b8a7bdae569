import assert from 'node:assert/strict';
import { test } from 'node:test';
import packageJson from '../../package.json' with { type: 'json' };
import { buildTestApp } from '../helpers/build-test-app.ts';
import { clientToken } from '../helpers/tokens.ts';

test('GET /rest/health answers 200 application/json to the JSON:API Accept header a JSON:API client sends, 406 to no JSON', async (t) => {
  const app = await buildTestApp(t);
  const authorization = `Bearer ${await clientToken(app, ['health:read'])}`;
  for (const accept of [
    'application/vnd.api+json',
    'application/vnd.api+json, application/json;q=0.5',
    'application/json',
    '*/*',
  ]) {
    const response = await app.api.inject({ url: '/rest/health', headers: { authorization, accept } });
    assert.equal(response.statusCode, 200, accept);
    assert.match(String(response.headers['content-type']), /^application\/json/, accept);
    assert.deepEqual(response.json(), { status: 'UP', version: packageJson.version });
  }
  // An Accept header that allows no JSON, or asks for a JSON:API extension, is still 406.
  for (const accept of ['text/html', 'application/vnd.api+json; ext="https://example.com/ext"']) {
    const response = await app.api.inject({ url: '/rest/health', headers: { authorization, accept } });
    assert.equal(response.statusCode, 406, accept);
    assert.equal(response.json().errors[0].code, 'NOT_ACCEPTABLE');
  }
});
