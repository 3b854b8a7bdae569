import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import type { Shape } from './answer-shapes.ts';
import { sendChecked } from './fuzz-request.ts';
import { fuzzParameters, selected } from './fuzz-settings.ts';
import { listedClasses, requestOf, restCase, validCase } from './rest-cases.ts';
import { buildRestWorld, type RestWorld } from './rest-world.ts';
import { apiOperations, type Operation, routesOf } from './route-catalog.ts';

/**
 * Fuzzing of every operation of the REST listener (/rest, /admin, /cards/generic) and of the card
 * tokenization listener: for each, the classes the hardening issue lists, then random and near-valid requests
 * (mutated valid bodies, hostile headers, query strings and path ids, wrong media types, tokens of every
 * kind). Every answer is checked by `sendChecked`: never a 5xx, within the bound, the documented error shape,
 * and a refusal leaves the database as it was.
 */

/**
 * Card tokenization answers its own error document (application/json); the API listener's 404 and 405 are
 * JSON:API.
 */
function shapeOf(operation: Operation, method: string): Shape {
  const cardRoute = operation.path.includes('/cards/') && (method === 'POST' || method === 'OPTIONS');
  return cardRoute || operation.name.startsWith('payments ') ? 'card-error' : 'json-api';
}

/** One valid body of each kind the operation takes. */
function seedsOf(world: RestWorld, operation: Operation) {
  return Promise.all(
    Array.from({ length: world.seedKinds(operation) }, (_, kind) => world.seedFor(operation, kind)),
  );
}

async function fuzzOperation(world: RestWorld, app: FastifyInstance, operation: Operation): Promise<void> {
  await fc.assert(
    fc.asyncProperty(restCase(world, operation), async (c) => {
      const request = await requestOf(world, operation, c);
      await sendChecked(app, world.watch, request, shapeOf(operation, c.method), operation.name);
    }),
    fuzzParameters(
      operation.name,
      listedClasses(operation, await seedsOf(world, operation)).map((c) => [c] as [typeof c]),
    ),
  );
}

test('fuzz: every operation of the REST listener, /admin and card tokenization', async (t) => {
  const world = await buildRestWorld(t);
  const operations = apiOperations(world.app.api);
  // The catalogue is read from the router: make sure it found the API, not an empty list.
  for (const name of [
    'POST /rest/transfers',
    'POST /rest/accounts',
    'POST /admin/organizations',
    'POST /cards/generic',
  ])
    assert.ok(
      operations.some((operation) => operation.name === name),
      `${name} not among ${operations.map((o) => o.name)}`,
    );
  const payments = routesOf(world.app.payments).map(
    (route): Operation => ({
      name: `payments ${route.method} ${route.path}`,
      method: route.method,
      path: route.path,
      params: [],
      query: [],
      security: [],
      bodyType: route.method === 'POST' ? 'application/json' : undefined,
    }),
  );
  assert.ok(payments.some((operation) => operation.name === 'payments POST /v2/cards/generic'));
  for (const operation of [...operations, ...payments]) {
    if (!selected(operation.name)) continue;
    const app = operation.name.startsWith('payments ') ? world.app.payments : world.app.api;
    await t.test(operation.name, () => fuzzOperation(world, app, operation));
  }
  const spelling = 'the spelling of a /rest or /admin path does not change its answer';
  if (selected(spelling)) await t.test(spelling, () => fuzzSpelling(world, spelling));
});

/**
 * `/%72est/transfers` is `/rest/transfers`: content negotiation and the version header hold for both (defect
 * 7).
 */
async function fuzzSpelling(world: RestWorld, name: string): Promise<void> {
  const operations = apiOperations(world.app.api).filter(
    (operation) => operation.path.startsWith('/rest/') || operation.path.startsWith('/admin/'),
  );
  // Requests every operation refuses before its handler runs: negotiation, version header, media type.
  const refusals = [
    { accept: 'text/html' },
    { version: '2' },
    { contentType: 'text/plain', body: { kind: 'value', value: { $: 'json', value: 'x' } } },
  ] as const;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...operations.map((operation) => operation.name)),
      fc.constantFrom(...refusals),
      fc.nat(),
      async (operationName, refusal, letter) => {
        const operation = operations.find((candidate) => candidate.name === operationName)!;
        const c = { ...validCase(operation), ...refusal };
        const plain = await requestOf(world, operation, c);
        const path = plain.url.split('?')[0]!;
        const letters = [...path.matchAll(/[a-z]/g)].map((match) => match.index!);
        const at = letters[letter % letters.length]!;
        const respelled = {
          ...plain,
          url: `${path.slice(0, at)}%${path.charCodeAt(at).toString(16)}${plain.url.slice(at + 1)}`,
        };
        const first = await sendChecked(world.app.api, world.watch, plain, 'json-api', name);
        const second = await sendChecked(world.app.api, world.watch, respelled, 'json-api', name);
        assert.equal(
          second.status,
          first.status,
          `${operation.name}: ${plain.url} answered ${first.status} but ${respelled.url} answered ${second.status}: ${second.body.slice(0, 300)}`,
        );
      },
    ),
    fuzzParameters(name),
  );
}
