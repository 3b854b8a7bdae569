import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.ts';
import { eventually } from '../helpers/eventually.ts';

/** A low threshold, so that one stall of the event loop is enough to be overloaded. */
const SHEDDING = { EWA_SHED_EVENT_LOOP_DELAY_MS: '100', EWA_SHED_SAMPLE_INTERVAL_MS: '200' };
const SAMPLE_MS = 200;

function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: nothing else runs
  }
}

/**
 * Runs `work` while the event loop is overloaded, as in a process with more work than it can do: it is held for a
 * sample's length at a time, with short gaps in which requests are taken. The delay is the mean of the loop's ticks
 * over a sample, so every sample meanwhile is far above the threshold.
 */
async function whileOverloaded<T>(listener: FastifyInstance, work: () => Promise<T>): Promise<T> {
  const stalls = setInterval(() => busyFor(SAMPLE_MS), SAMPLE_MS + 5);
  try {
    await eventually(async () => listener.isUnderPressure(), 20 * SAMPLE_MS);
    return await work();
  } finally {
    clearInterval(stalls);
  }
}

/** Past the samples that span start-up, which are not acted on. */
async function pastStartUp(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 3 * SAMPLE_MS));
}

/** A REST request that needs the database and a token; without one it is 401, unless it is refused first. */
const personRead = (app: TestApp) => app.api.inject({ url: `/rest/people/${crypto.randomUUID()}` });

test('an overloaded process refuses new REST requests with 503 SERVICE_UNAVAILABLE and Retry-After', async (t) => {
  const app = await buildTestApp(t, SHEDDING);
  // Building the app stalled the loop far beyond the threshold: the samples that span start-up are not acted on,
  // so a request right after is served all the same.
  assert.equal((await personRead(app)).statusCode, 401);
  await pastStartUp();
  const refused = await whileOverloaded(app.api, () => personRead(app));
  assert.equal(refused.statusCode, 503, refused.body);
  assert.match(String(refused.headers['retry-after']), /^[1-9]\d*$/);
  assert.match(String(refused.headers['content-type']), /^application\/vnd\.api\+json/);
  assert.equal(refused.json().errors[0].code, 'SERVICE_UNAVAILABLE');
  assert.equal(refused.json().errors[0].meta.request_id, refused.headers['x-request-id']);
  // Once the loop keeps up again, requests are taken (and this one meets the token check).
  await eventually(async () => (await personRead(app)).statusCode === 401);
  assert.equal((await personRead(app)).statusCode, 401);
});

test('the authorization server refuses with the OAuth error JSON, and an HTML page where a person signs in', async (t) => {
  const app = await buildTestApp(t, SHEDDING);
  await pastStartUp();
  const discovery = await whileOverloaded(app.auth, () =>
    app.auth.inject({ url: '/.well-known/openid-configuration' }),
  );
  assert.equal(discovery.statusCode, 503);
  assert.match(String(discovery.headers['retry-after']), /^[1-9]\d*$/);
  assert.equal(discovery.json().error, 'temporarily_unavailable');
  const page = await whileOverloaded(app.auth, () =>
    app.auth.inject({ url: '/interaction/some-interaction' }),
  );
  assert.equal(page.statusCode, 503);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  assert.match(page.body, /temporarily_unavailable/);
});

test('card tokenization refuses with its error document', async (t) => {
  const app = await buildTestApp(t, SHEDDING);
  await pastStartUp();
  const refused = await whileOverloaded(app.payments, () =>
    app.payments.inject({
      method: 'POST',
      url: '/v2/cards/generic',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    }),
  );
  assert.equal(refused.statusCode, 503, refused.body);
  assert.match(String(refused.headers['retry-after']), /^[1-9]\d*$/);
  assert.equal(refused.json().errors[0].code, 'SERVICE_UNAVAILABLE');
});
