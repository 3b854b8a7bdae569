import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { DEMO } from '../../src/seed/demo.ts';
import { startApiProcess } from '../helpers/ew-processes.ts';
import { createTestDatabase, onPostgres } from '../helpers/test-database.ts';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: Record<string, unknown> }[];
}
const SERVER = 2;
const CLIENT = 3;

/** An OTLP/HTTP collector of our own: keeps every body it is sent. */
async function collector(t: TestContext) {
  const bodies: { path: string; type: string; text: string }[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push({
        path: request.url ?? '',
        type: request.headers['content-type'] ?? '',
        text: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

async function databaseEnv(t: TestContext): Promise<Record<string, string>> {
  if (onPostgres) return (await createTestDatabase(t)).env;
  const dataDir = mkdtempSync(join(tmpdir(), 'ewa-tracing-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  return { EWA_DATA_DIR: dataDir };
}

const attribute = (span: OtlpSpan, key: string) => span.attributes?.find((each) => each.key === key)?.value;

test('traces: a request and its statements reach the OTLP endpoint, continuing the caller’s trace', async (t) => {
  const otlp = await collector(t);
  const server = await startApiProcess({
    ...(await databaseEnv(t)),
    EWA_SEED_DEMO: 'true',
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_SERVICE_NAME: 'ewa-under-test',
  });
  t.after(() => server.kill());
  const { clientId, secret } = DEMO.clients.confidential;
  const tokenResponse = await fetch(`${server.authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      scope: 'health:read',
      client_id: clientId,
      client_secret: secret,
    }),
  });
  assert.equal(tokenResponse.status, 200);
  const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
  const traceId = randomBytes(16).toString('hex');
  const callerSpan = randomBytes(8).toString('hex');
  const health = await fetch(`${server.apiUrl}/rest/health`, {
    headers: { authorization: `Bearer ${token}`, traceparent: `00-${traceId}-${callerSpan}-01` },
  });
  assert.equal(health.status, 200);
  // A stop sends what is still buffered.
  assert.equal(await server.stop(), 0, server.output());

  assert.ok(otlp.bodies.length > 0, 'nothing reached the collector');
  for (const body of otlp.bodies) {
    assert.equal(body.path, '/v1/traces');
    assert.match(body.type, /json|protobuf/);
    // Credentials never leave in a span.
    assert.ok(!body.text.includes(token) && !body.text.includes(secret), 'a credential was sent in a span');
  }
  const exports = otlp.bodies.map(
    (body) =>
      JSON.parse(body.text) as {
        resourceSpans: {
          resource: { attributes: { key: string; value: { stringValue?: string } }[] };
          scopeSpans: { spans: OtlpSpan[] }[];
        }[];
      },
  );
  const resources = exports.flatMap((each) => each.resourceSpans);
  assert.ok(
    resources.every((each) =>
      each.resource.attributes.some(
        (entry) => entry.key === 'service.name' && entry.value.stringValue === 'ewa-under-test',
      ),
    ),
  );
  const spans = resources.flatMap((each) => each.scopeSpans.flatMap((scope) => scope.spans));
  const ours = spans.filter((span) => span.traceId === traceId);
  const request = ours.find((span) => span.kind === SERVER);
  assert.ok(request, `no server span in the caller's trace: ${JSON.stringify(spans.map((s) => s.name))}`);
  assert.equal(request.parentSpanId, callerSpan);
  assert.equal(attribute(request, 'http.route')?.stringValue, '/rest/health');
  assert.equal(attribute(request, 'ewa.request_id')?.stringValue, health.headers.get('x-request-id'));
  const statement = ours.find((span) => span.kind === CLIENT && span.name === 'select');
  assert.ok(statement, `no statement span in the trace: ${JSON.stringify(ours.map((s) => s.name))}`);
  assert.equal(attribute(statement, 'db.system.name')?.stringValue, 'postgresql');
  assert.match(String(attribute(statement, 'db.query.text')?.stringValue), /select 1/);
  assert.ok(ours.some((span) => span.spanId === statement.parentSpanId));
  // The token request was traced too, on a trace of its own (no traceparent was sent with it).
  assert.ok(spans.some((span) => span.kind === SERVER && span.traceId !== traceId));
});
