/**
 * The examples of the OpenAPI document (src/platform/openapi-examples.ts), as the reference page shows them: every
 * operation has a request body example (when it reads one) and an example of each documented response with a body;
 * each validates against the schema it illustrates; an error example carries the status it is shown under and a
 * code of the catalog that answers that status (and that the schema lists); and none is a placeholder. A new route
 * without examples fails here.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ERROR_CATALOG } from '../../src/errors/catalog.ts';
import { EXAMPLE_REQUEST_ID, operationExamples } from '../../src/platform/openapi-examples.ts';
import { claimDemoData, DEMO, demoWorkerIds } from '../../src/seed/demo.ts';
import { BASE_URL, buildTestApp, FIXED_NOW } from '../helpers/build-test-app.ts';
import { clientToken, createTestClient, userToken } from '../helpers/tokens.ts';

interface MediaType {
  schema?: { properties?: Record<string, unknown> };
  example?: unknown;
}

interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, { content?: Record<string, MediaType> }>;
}

type Document = { paths: Record<string, Record<string, Operation>> };

const DOCUMENT_ID = 'served-openapi.json';

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The same validator as the contract checks (test/helpers/contract.ts): Ajv's 2020-12 dialect with formats. */
function validatorOf(document: Document) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (instance: Ajv2020) => void)(ajv);
  ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  return (pointer: string, value: unknown): string | undefined => {
    const validate = ajv.getSchema(`${DOCUMENT_ID}#${pointer}`);
    if (!validate) return `no schema at ${pointer}`;
    return validate(value) ? undefined : JSON.stringify(validate.errors, null, 1);
  };
}

/** Every string of an example that is a generator's placeholder rather than a value the server sends. */
function placeholders(value: unknown, at = ''): string[] {
  if (typeof value === 'string') return /^string$/i.test(value.trim()) ? [at || '(the example)'] : [];
  if (Array.isArray(value)) return value.flatMap((item, index) => placeholders(item, `${at}/${index}`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => placeholders(item, `${at}/${key}`));
  return [];
}

/** The codes an error schema lists in its description ("One of: A, B."), when it lists them. */
function listedCodes(media: MediaType): string[] | undefined {
  const errors = media.schema?.properties?.errors as
    | { items?: { properties?: { code?: { description?: string } } } }
    | undefined;
  const description = errors?.items?.properties?.code?.description;
  const match = description ? /One of: ([^.]+)\./.exec(description) : null;
  return match ? match[1]!.split(/,\s*/) : undefined;
}

test('every operation of the document shows a real, valid example of its request body and of each answer with a body', async (t) => {
  const { api } = await buildTestApp(t);
  const document = (await api.inject({ url: '/rest/openapi.json' })).json() as Document;
  const check = validatorOf(document);
  const problems: string[] = [];
  let examples = 0;
  const operationIds = new Set<string>();
  const media = (where: string, pointer: string, type: string, entry: MediaType) => {
    if (entry.example === undefined) {
      problems.push(`${where} (${type}): no example`);
      return false;
    }
    examples++;
    const invalid = check(`${pointer}/content/${escapePointer(type)}/schema`, entry.example);
    if (invalid) problems.push(`${where} (${type}): the example does not match its schema: ${invalid}`);
    for (const at of placeholders(entry.example))
      problems.push(`${where} (${type}): placeholder "string" at ${at}`);
    if (typeof entry.example === 'string' && entry.example.trim() === '')
      problems.push(`${where}: empty example`);
    return true;
  };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`;
      const pointer = `/paths/${escapePointer(path)}/${method}`;
      operationIds.add(operation.operationId);
      for (const [type, entry] of Object.entries(operation.requestBody?.content ?? {}))
        media(`${where} request body`, `${pointer}/requestBody`, type, entry);
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [type, entry] of Object.entries(response.content ?? {})) {
          if (!media(`${where} ${status}`, `${pointer}/responses/${status}`, type, entry)) continue;
          if (status.startsWith('2')) continue;
          const errors = (entry.example as { errors?: { status?: string; code?: string; meta?: unknown }[] })
            .errors;
          const error = errors?.[0];
          if (!error) {
            problems.push(`${where} ${status}: the example is not an error document`);
            continue;
          }
          if (error.status !== status) problems.push(`${where} ${status}: the example says ${error.status}`);
          const code = error.code as keyof typeof ERROR_CATALOG;
          if (ERROR_CATALOG[code]?.status !== Number(status))
            problems.push(`${where} ${status}: ${code} is not a code the server answers with ${status}`);
          const listed = listedCodes(entry);
          if (listed && !listed.includes(code))
            problems.push(`${where} ${status}: ${code} is not among the codes the schema lists`);
          assert.deepEqual(error.meta, { request_id: EXAMPLE_REQUEST_ID });
        }
      }
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(examples > 300, `${examples} examples`);
  const stale = Object.keys(operationExamples(BASE_URL)).filter((id) => !operationIds.has(id));
  assert.deepEqual(stale, [], 'examples of operations the document no longer has');
});

test('the examples link to the server they are served by', async (t) => {
  const { api } = await buildTestApp(t, { EWA_BASE_URL: 'https://sandbox.ewa.example' });
  const document = (await api.inject({ url: '/rest/openapi.json' })).json() as Document;
  const read = document.paths['/rest/transfers/{transfer_id}']!.get!;
  const answer = read.responses['200']!.content!['application/vnd.api+json']!.example as {
    data: { links: { self: string } };
  };
  assert.match(answer.data.links.self, /^https:\/\/sandbox\.ewa\.example\/rest\/transfers\//);
  const notFound = read.responses['404']!.content!['application/vnd.api+json']!.example as {
    errors: { links: { about: string } }[];
  };
  assert.equal(notFound.errors[0]!.links.about, 'https://sandbox.ewa.example/rest/errors#RECORD_NOT_FOUND');
  assert.doesNotMatch(JSON.stringify(document), /api\.ewa\.test/);
});

test('the shared error examples are the documents the server really answers', async (t) => {
  const app = await buildTestApp(t);
  const { api } = app;
  const document = (await api.inject({ url: '/rest/openapi.json' })).json() as Document;
  const client = await createTestClient(app, { scopes: ['health:read', 'client:admin', 'admin:operator'] });
  const token = await clientToken(app, ['health:read', 'client:admin', 'admin:operator'], client);
  const healthOnly = await clientToken(app, ['health:read'], client);
  const example = (path: string, method: string, status: string) => {
    const content = document.paths[path]![method]!.responses[status]!.content!;
    return Object.values(content)[0]!.example as { errors: Record<string, unknown>[] };
  };
  const headers = { 'x-request-id': EXAMPLE_REQUEST_ID, authorization: `Bearer ${token}` };
  const cases = [
    { method: 'GET', path: '/rest/transfers', status: '401', headers: { authorization: '' } },
    { method: 'GET', path: '/rest/transfers', status: '403', headers: {} },
    {
      method: 'GET',
      path: '/rest/people/{person_id}',
      url: `/rest/people/${DEMO.people[0]!.id}`,
      status: '403',
      headers: { authorization: `Bearer ${healthOnly}` },
    },
    { method: 'GET', path: '/rest/health', status: '406', headers: { accept: 'text/html' } },
    { method: 'GET', path: '/rest/organizations', status: '400', headers: {}, query: 'filter=name%3D%3D' },
    {
      method: 'POST',
      path: '/admin/organizations',
      status: '415',
      headers: { 'content-type': 'text/plain' },
      payload: 'name=Acme',
    },
  ] as const;
  for (const call of cases) {
    const response = await api.inject({
      method: call.method,
      url: 'query' in call ? `${call.path}?${call.query}` : 'url' in call ? call.url : call.path,
      headers: { ...headers, ...call.headers },
      ...('payload' in call ? { payload: call.payload } : {}),
    });
    assert.equal(String(response.statusCode), call.status, response.body);
    const sent = response.json() as { errors: Record<string, unknown>[] };
    assert.deepEqual(
      example(call.path, call.method.toLowerCase(), call.status),
      sent,
      `${call.method} ${call.path} ${call.status}`,
    );
  }
});

test("the examples of reads are the sandbox's answers for the demo data, at the demo's instant", async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  await claimDemoData(app.database.db, FIXED_NOW, app.config);
  const alex = DEMO.people[0]!;
  const partner = DEMO.clients.confidential;
  const tokens = {
    person: await userToken(app, alex.id, ['user:read'], partner.clientId),
    client: await clientToken(app, ['client:admin', 'health:read'], partner),
  };
  const examples = operationExamples(BASE_URL);
  const { jobId, depositoryId } = demoWorkerIds(alex.id);
  const reads = [
    ['getHealth', '/rest/health', tokens.client],
    ['listOrganizations', '/rest/organizations', tokens.client],
    ['readOrganization', `/rest/organizations/${DEMO.organizations.acme.id}`, tokens.client],
    ['readPerson', `/rest/people/${alex.id}`, tokens.person],
    ['readJob', `/rest/jobs/${jobId}`, tokens.person],
    ['readAccount', `/rest/accounts/${depositoryId}`, tokens.person],
  ] as const;
  for (const [operationId, url, token] of reads) {
    const response = await app.api.inject({ url, headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.statusCode, 200, `${operationId}: ${response.body}`);
    assert.deepEqual(examples[operationId]!.answer, response.json(), operationId);
  }
});
