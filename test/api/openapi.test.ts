import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BASE_URL, buildTestApp } from '../helpers/build-test-app.ts';
import { referenceFacts } from '../helpers/contract.ts';
import { createOrganization, createWorker, workerToken } from '../helpers/factories.ts';
import { clientToken, createTestClient } from '../helpers/tokens.ts';

interface ReferenceOperation {
  operationId: string;
  security: unknown;
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

test("the reference page carries EWA Server's title and favicon, not the library's", async (t) => {
  const { api } = await buildTestApp(t);
  const page = await api.inject({ url: '/rest/docs', headers: { accept: 'text/html' } });
  assert.match(page.body, /<title>EWA Server — API reference<\/title>/);
  const icons = [...page.body.matchAll(/<link rel="icon"[^>]*href="([^"]+)"/g)].map((match) => match[1]!);
  assert.deepEqual(icons, ['/rest/docs/static/theme/favicon.svg'], 'our favicon, and only ours');
  const icon = await api.inject({ url: icons[0]!, headers: { accept: 'image/*' } });
  assert.equal(icon.statusCode, 200);
  assert.equal(icon.headers['content-type'], 'image/svg+xml');
  assert.match(icon.body, /^<svg [^>]*><title>EWA Server<\/title>/);
  assert.doesNotMatch(page.body.replace(/(?:src|href)="[^"]+"|id="swagger-ui"/g, ''), /swagger/i);
});

test('every operation served has the path, method, operationId and security of the published description', async (t) => {
  const reference = referenceFacts() as unknown as {
    paths: Record<string, Record<string, ReferenceOperation>>;
  };
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
    ['post', '/admin/organizations/{organization_id}/invitations', 'adminIssueInvitations'],
    ['post', '/admin/organizations/{organization_id}/earnings', 'adminImportEarnings'],
    ['post', '/admin/jobs/{job_id}/activate', 'adminActivateJob'],
    ['post', '/admin/jobs/{job_id}/deactivate', 'adminDeactivateJob'],
    ['get', '/admin/sandbox/clock', 'adminGetSandboxClock'],
    ['post', '/admin/sandbox/clock', 'adminAdvanceSandboxClock'],
    ['post', '/admin/sandbox/reset', 'adminResetSandbox'],
    ['get', '/admin/webhook_endpoints', 'adminListWebhookEndpoints'],
    ['post', '/admin/webhook_endpoints', 'adminCreateWebhookEndpoint'],
    ['get', '/admin/webhook_endpoints/{endpoint_id}', 'adminReadWebhookEndpoint'],
    ['patch', '/admin/webhook_endpoints/{endpoint_id}', 'adminUpdateWebhookEndpoint'],
    ['delete', '/admin/webhook_endpoints/{endpoint_id}', 'adminDeleteWebhookEndpoint'],
    ['post', '/admin/webhook_endpoints/{endpoint_id}/rotate_secret', 'adminRotateWebhookSecret'],
    ['post', '/admin/webhook_endpoints/{endpoint_id}/test', 'adminTestWebhookEndpoint'],
    ['get', '/admin/webhook_endpoints/{endpoint_id}/deliveries', 'adminListWebhookDeliveries'],
    ['post', '/admin/webhook_endpoints/{endpoint_id}/redeliveries', 'adminRedeliverWebhookEvents'],
    ['get', '/admin/compliance/rules', 'adminListComplianceRules'],
    ['post', '/admin/compliance/rules', 'adminSetComplianceRule'],
    ['get', '/admin/compliance/rules/{rule_id}', 'adminReadComplianceRule'],
    ['patch', '/admin/compliance/rules/{rule_id}', 'adminUpdateComplianceRule'],
    ['delete', '/admin/compliance/rules/{rule_id}', 'adminRemoveComplianceOverride'],
    ['get', '/admin/disclosures', 'adminListDisclosures'],
    ['post', '/admin/disclosures', 'adminPublishDisclosure'],
    ['get', '/admin/transfers/{transfer_id}/disclosure', 'adminReadTransferDisclosure'],
    ['get', '/admin/complaints', 'adminListComplaints'],
    ['post', '/admin/complaints', 'adminOpenComplaint'],
    ['get', '/admin/complaints/{complaint_id}', 'adminReadComplaint'],
    ['patch', '/admin/complaints/{complaint_id}', 'adminUpdateComplaint'],
    ['get', '/admin/reports/state', 'adminStateReport'],
    ['get', '/admin/reports/state.csv', 'adminStateReportCsv'],
    ['get', '/admin/reports/remittance', 'adminRemittanceReport'],
    ['get', '/admin/reports/remittance.csv', 'adminRemittanceReportCsv'],
    ['get', '/admin/reports/returns', 'adminReturnsReport'],
    ['post', '/admin/reports/returns/{item_id}/repayment', 'adminRecordReturnRepaid'],
    ['get', '/admin/overpayments', 'adminListOverpayments'],
    ['get', '/admin/overpayments/{overpayment_id}', 'adminGetOverpayment'],
    ['post', '/admin/overpayments/{overpayment_id}/resolution', 'adminResolveOverpayment'],
    ['post', '/admin/overpayments/{overpayment_id}/write_off', 'adminWriteOffOverpayment'],
  ] as const;
  for (const [method, path, operationId] of operations) {
    const operation = document.paths[path]?.[method];
    assert.ok(operation, `${method.toUpperCase()} ${path} is missing`);
    assert.equal(operation.operationId, operationId);
    assert.deepEqual(operation.tags, ['Operator']);
    assert.deepEqual(operation.security, [{ oauth_client_credentials_token: ['admin:operator'] }]);
    assert.ok(operation.summary, `${operationId} has a summary`);
  }
  assert.deepEqual(
    Object.keys(document.paths)
      .filter((path) => path.startsWith('/admin/'))
      .sort(),
    [...new Set(operations.map(([, path]) => path))].sort(),
    'no other /admin path',
  );
  const roster = document.paths['/admin/organizations/{organization_id}/roster'].post;
  assert.deepEqual(Object.keys(roster.requestBody.content), ['text/csv']);
  const scopes =
    document.components.securitySchemes.oauth_client_credentials_token.flows.clientCredentials.scopes;
  assert.ok(scopes['admin:operator']);
});

interface DocumentOperation {
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, unknown> }>;
}

/** A token that reaches each kind of operation: the operator's for /admin, a person's for /rest, none for cards. */
async function tokensFor(app: Awaited<ReturnType<typeof buildTestApp>>) {
  const organizationId = await createOrganization(app);
  const worker = await createWorker(app, organizationId);
  const operatorClient = await createTestClient(app, { scopes: ['admin:operator'], redirectUris: [] });
  const operator = await clientToken(app, ['admin:operator'], operatorClient);
  const health = await clientToken(app, ['health:read']);
  const person = await workerToken(app, worker.personId);
  return (path: string): Record<string, string> => {
    if (path.startsWith('/admin/')) return { authorization: `Bearer ${operator}` };
    if (path === '/rest/health') return { authorization: `Bearer ${health}` };
    if (path.startsWith('/rest/'))
      return { authorization: `Bearer ${person}`, 'idempotency-key': randomUUID() };
    return {};
  };
}

/** A body of each declared media type: not one the operation accepts as valid, but one it must read. */
const SAMPLE_BODIES: Record<string, string> = {
  'application/vnd.api+json': '{"data":{}}',
  'application/json': '{}',
  'text/csv': 'a,b\n1,2\n',
};

test('requests built from our own document are accepted: each body in its declared type, each answer in the type declared for its status', async (t) => {
  const app = await buildTestApp(t);
  const document = (await app.api.inject({ url: '/rest/openapi.json' })).json();
  const headersFor = await tokensFor(app);
  let sent = 0;
  for (const [template, item] of Object.entries(
    document.paths as Record<string, Record<string, DocumentOperation>>,
  )) {
    const path = template.replace(/\{[^}]+\}/g, randomUUID());
    for (const [method, operation] of Object.entries(item)) {
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))!;
      const accept = Object.keys(success[1].content ?? { '*/*': {} })[0]!;
      const bodyTypes = Object.keys(operation.requestBody?.content ?? {});
      for (const contentType of bodyTypes.length > 0 ? bodyTypes : [undefined]) {
        const payload = contentType === undefined ? undefined : SAMPLE_BODIES[contentType];
        if (contentType !== undefined)
          assert.ok(payload, `${method} ${template} declares ${contentType}: no sample body for it`);
        const response = await app.api.inject({
          method: method.toUpperCase() as 'GET',
          url: path,
          headers: { ...headersFor(path), accept, ...(contentType ? { 'content-type': contentType } : {}) },
          ...(payload === undefined ? {} : { payload }),
        });
        const where = `${method.toUpperCase()} ${template} (${contentType ?? 'no body'}): ${response.statusCode}`;
        assert.notEqual(response.statusCode, 415, `${where} ${response.body}`);
        assert.notEqual(response.statusCode, 406, `${where} ${response.body}`);
        const declared = operation.responses[String(response.statusCode)];
        assert.ok(declared, `${where} is not a status the document declares`);
        if (declared.content) {
          const type = String(response.headers['content-type']).split(';')[0]!;
          assert.ok(Object.hasOwn(declared.content, type), `${where} sent ${type}`);
        }
        sent++;
      }
    }
  }
  assert.ok(sent >= 26, `every operation was called (${sent})`);
});

test('the document declares application/vnd.api+json on /rest and /admin, application/json for health and cards, text/csv for uploads', async (t) => {
  const { api } = await buildTestApp(t);
  const document = (await api.inject({ url: '/rest/openapi.json' })).json();
  const types = (operation: DocumentOperation) => ({
    request: Object.keys(operation.requestBody?.content ?? {}),
    success: Object.keys(operation.responses['200']?.content ?? {}),
    error: Object.keys(operation.responses['401']?.content ?? operation.responses['400']?.content ?? {}),
  });
  assert.deepEqual(types(document.paths['/rest/transfers'].post), {
    request: ['application/vnd.api+json'],
    success: ['application/vnd.api+json'],
    error: ['application/vnd.api+json'],
  });
  assert.deepEqual(types(document.paths['/rest/health'].get), {
    request: [],
    success: ['application/json'],
    error: ['application/vnd.api+json'],
  });
  assert.deepEqual(types(document.paths['/cards/generic'].post), {
    request: ['application/json'],
    success: ['application/json'],
    error: ['application/json'],
  });
  assert.deepEqual(types(document.paths['/admin/organizations/{organization_id}/earnings'].post).request, [
    'text/csv',
  ]);
  const everywhere = JSON.stringify(
    Object.entries(document.paths as Record<string, unknown>).filter(
      ([path]) => path.startsWith('/rest/') && path !== '/rest/health',
    ),
  );
  assert.doesNotMatch(everywhere, /"application\/json"/);
});

test("the reference page's Authorize uses PKCE, with the public demo client prefilled in the sandbox", async (t) => {
  const { api } = await buildTestApp(t);
  const script = await api.inject({
    url: '/rest/docs/static/swagger-initializer.js',
    headers: { accept: '*/*' },
  });
  assert.equal(script.statusCode, 200);
  assert.match(
    script.body,
    /ui\.initOAuth\(\{"usePkceWithAuthorizationCodeGrant":true,"clientId":"demo-partner-mobile"\}\)/,
  );
  assert.match(script.body, /"layout":"BaseLayout"/, 'no swagger-ui top bar');
});

test('the disclosure operations are in the document as an extension, tagged Disclosures', async (t) => {
  const { api } = await buildTestApp(t);
  const document = (await api.inject({ url: '/rest/openapi.json' })).json();
  const tag = document.tags.find((candidate: { name: string }) => candidate.name === 'Disclosures');
  assert.match(tag?.description ?? '', /extension/);
  for (const [method, path, operationId, scope] of [
    ['get', '/rest/people/{person_id}/disclosures', 'listPersonDisclosures', 'user:read'],
    ['post', '/rest/people/{person_id}/disclosure_acceptances', 'acceptDisclosure', 'user:read_write'],
  ] as const) {
    const operation = document.paths[path]?.[method];
    assert.equal(operation?.operationId, operationId);
    assert.deepEqual(operation.tags, ['Disclosures']);
    assert.deepEqual(operation.security, [{ oauth_user_token: [scope] }]);
    assert.match(operation.description, /extension/i);
  }
  const transfer =
    document.paths['/rest/transfers'].post.requestBody.content['application/vnd.api+json'].schema;
  assert.ok(
    transfer.properties.data.properties.meta.properties.disclosure_acknowledged,
    'the acknowledgement',
  );
});

test('every parameter of the published description is in our document with its required flag (the version header aside)', async (t) => {
  const reference = referenceFacts() as unknown as {
    paths: Record<string, Record<string, { parameters?: { $ref?: string; name: string; in: string }[] }>>;
    components: { parameters: Record<string, { name: string; in: string; required?: boolean }> };
  };
  const { api } = await buildTestApp(t);
  const document = (await api.inject({ url: '/rest/openapi.json' })).json();
  type Parameter = { $ref?: string; name: string; in: string; required?: boolean };
  const resolve = (parameter: Parameter) =>
    parameter.$ref
      ? reference.components.parameters[parameter.$ref.replace('#/components/parameters/', '')]!
      : parameter;
  let compared = 0;
  for (const [path, item] of Object.entries(reference.paths)) {
    const shared = (item.parameters ?? []) as Parameter[];
    for (const [method, operation] of Object.entries(item)) {
      if (method === 'parameters' || !document.paths[path]?.[method]) continue;
      const ours = (document.paths[path][method].parameters ?? []) as {
        name: string;
        in: string;
        required?: boolean;
      }[];
      for (const parameter of [...shared, ...(operation.parameters ?? [])].map(resolve)) {
        if (parameter.name.endsWith('-API-Version')) continue;
        const name = parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name;
        const own = ours.find(
          (candidate) => candidate.in === parameter.in && candidate.name.toLowerCase() === name.toLowerCase(),
        );
        assert.ok(own, `${method.toUpperCase()} ${path} declares ${parameter.in} ${parameter.name}`);
        assert.equal(
          own.required ?? false,
          parameter.required ?? false,
          `${method.toUpperCase()} ${path} ${parameter.name} required`,
        );
        compared++;
      }
    }
  }
  assert.ok(compared > 20, `${compared} parameters compared`);
  const key = document.paths['/rest/transfers'].post.parameters.find(
    (p: { in: string }) => p.in === 'header',
  );
  assert.equal(key.required, true, 'Idempotency-Key is required, as the server answers 400 without it');
});

test('every status our document declares beyond the published description is listed in extensions.md', async (t) => {
  const reference = referenceFacts() as unknown as {
    paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  };
  const { api } = await buildTestApp(t);
  const document = (await api.inject({ url: '/rest/openapi.json' })).json();
  const page = readFileSync(
    join(import.meta.dirname, '..', '..', 'docs', 'integrators', 'extensions.md'),
    'utf8',
  );
  const row = page
    .split('\n')
    .find((line) => line.startsWith('| HTTP statuses the description leaves open |'));
  assert.ok(row, 'extensions.md lists the statuses the description leaves open');
  const anyOperation = new Set(row.split('|')[2]!.match(/\d{3}/g));
  const listed = (operation: string) =>
    new Set(
      page
        .split('\n')
        .filter((line) => line.startsWith(`| \`${operation}\` |`))
        .flatMap((line) => line.split('|')[2]!.match(/\b\d{3}\b/g) ?? []),
    );
  for (const [path, item] of Object.entries(reference.paths))
    for (const [method, operation] of Object.entries(item)) {
      const ours = document.paths[path]?.[method];
      if (method === 'parameters' || !ours) continue;
      const name = `${method.toUpperCase()} ${path}`;
      for (const status of Object.keys(ours.responses)) {
        if (Object.hasOwn(operation.responses ?? {}, status) || anyOperation.has(status)) continue;
        assert.ok(listed(name).has(status), `extensions.md lists ${status} on ${name}`);
      }
    }
});
