import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BASE_URL, buildTestApp } from '../helpers/build-test-app.ts';

interface ReferenceOperation {
  operationId: string;
  security: unknown;
}

function referenceDocument(): { paths: Record<string, Record<string, ReferenceOperation>> } | undefined {
  const file = join(
    import.meta.dirname,
    '..',
    '..',
    '..',
    'shared',
    'reference',
    'ewa-rest-openapi-3.0.0-beta.117.json',
  );
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

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
  assert.deepEqual(Object.keys(health.responses).sort(), ['200', '401', '403', '406', '500', '503']);
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

test('every operation served has the path, method, operationId and security of the published description', async (t) => {
  const reference = referenceDocument();
  if (!reference) {
    t.skip('../shared is not beside this checkout');
    return;
  }
  const { api } = await buildTestApp(t);
  const document = (await api.inject({ url: '/rest/openapi.json' })).json();
  const served = [
    '/rest/health',
    '/rest/organizations',
    '/rest/people',
    '/rest/jobs',
    '/rest/accounts',
    '/rest/paychecks',
    '/rest/transfers',
  ];
  let compared = 0;
  for (const [path, item] of Object.entries(reference.paths)) {
    if (!served.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) continue;
    for (const [method, operation] of Object.entries(item)) {
      if (method === 'parameters') continue;
      const ours = document.paths[path]?.[method];
      assert.ok(ours, `${method.toUpperCase()} ${path} is missing from our document`);
      assert.equal(ours.operationId, operation.operationId, `${method} ${path}`);
      assert.deepEqual(ours.security, operation.security, `${method} ${path} security`);
      compared++;
    }
  }
  assert.equal(
    compared,
    17,
    'health, two organizations, two people, three jobs, four accounts, two paychecks and three transfers operations',
  );
  for (const path of [
    '/rest/organizations',
    '/rest/jobs',
    '/rest/accounts',
    '/rest/paychecks',
    '/rest/transfers',
  ]) {
    assert.match(document.paths[path].get.description, /At most 1000 /, `the bound of ${path}`);
  }
});

test('the operator API is in the document: every /admin operation with its id, tag and admin:operator', async (t) => {
  const { api } = await buildTestApp(t);
  const document = (await api.inject({ url: '/rest/openapi.json' })).json();
  const operations = [
    ['post', '/admin/organizations', 'adminCreateOrganization'],
    ['get', '/admin/organizations', 'adminListOrganizations'],
    ['get', '/admin/organizations/{organization_id}', 'adminReadOrganization'],
    ['patch', '/admin/organizations/{organization_id}/policy', 'adminUpdateOrganizationPolicy'],
    ['post', '/admin/organizations/{organization_id}/roster', 'adminImportRoster'],
    ['post', '/admin/organizations/{organization_id}/earnings', 'adminImportEarnings'],
    ['post', '/admin/jobs/{job_id}/activate', 'adminActivateJob'],
    ['post', '/admin/jobs/{job_id}/deactivate', 'adminDeactivateJob'],
  ] as const;
  for (const [method, path, operationId] of operations) {
    const operation = document.paths[path]?.[method];
    assert.ok(operation, `${method.toUpperCase()} ${path} is missing`);
    assert.equal(operation.operationId, operationId);
    assert.deepEqual(operation.tags, ['Operator']);
    assert.deepEqual(operation.security, [{ oauth_client_credentials_token: ['admin:operator'] }]);
    assert.ok(operation.summary, `${operationId} has a summary`);
  }
  assert.equal(
    Object.keys(document.paths).filter((path) => path.startsWith('/admin/')).length,
    7,
    'no other /admin path',
  );
  const roster = document.paths['/admin/organizations/{organization_id}/roster'].post;
  assert.deepEqual(Object.keys(roster.requestBody.content), ['text/csv']);
  const scopes =
    document.components.securitySchemes.oauth_client_credentials_token.flows.clientCredentials.scopes;
  assert.ok(scopes['admin:operator']);
});
