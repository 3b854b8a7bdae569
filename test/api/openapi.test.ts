import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BASE_URL, buildTestApp } from '../helpers/build-test-app.ts';

test('the OpenAPI document is generated from the routes and served as JSON', async (t) => {
  const { api } = await buildTestApp(t);
  const response = await api.inject({ url: '/rest/openapi.json' });
  assert.equal(response.statusCode, 200);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  const document = response.json();
  assert.equal(document.openapi, '3.1.0');
  assert.deepEqual(document.servers, [{ url: BASE_URL }]);
  const health = document.paths['/rest/health'].get;
  assert.equal(health.operationId, 'getHealth');
  assert.deepEqual(Object.keys(health.responses).sort(), ['200', '401', '403', '406', '500']);
  assert.ok(document.components.securitySchemes.oauth_client_credentials_token);
  assert.equal(document.paths['/rest/openapi.json'], undefined, 'internal routes stay out of the document');
});

test('the reference page and its assets are served locally, with no CDN', async (t) => {
  const { api } = await buildTestApp(t);
  const page = await api.inject({ url: '/rest/docs/', headers: { accept: 'text/html' } });
  assert.equal(page.statusCode, 200);
  assert.match(String(page.headers['content-type']), /text\/html/);
  const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
  assert.ok(assets.length > 0);
  for (const asset of assets) {
    assert.doesNotMatch(asset, /^(https?:)?\/\//, `${asset} is loaded from another origin`);
    const url = new URL(asset, `${BASE_URL}/rest/docs/`).pathname;
    const response = await api.inject({ url, headers: { accept: '*/*' } });
    assert.equal(response.statusCode, 200, url);
  }
  const initializer = await api.inject({ url: '/rest/docs/static/swagger-initializer.js' });
  assert.equal(initializer.statusCode, 200);
  assert.match(initializer.body, /\/rest\/openapi\.json/);
});
