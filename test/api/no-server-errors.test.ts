import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { buildTestApp } from '../helpers/build-test-app.ts';

const PATHS = [
  '/rest/health',
  '/rest/openapi.json',
  '/rest/errors',
  '/rest/accounts',
  '/rest/x/y',
  '/',
  '/admin',
];
const METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS'] as const;
const TYPES = ['application/vnd.api+json', 'application/json', 'text/plain', 'multipart/form-data', ''];

test('random methods, paths, query strings, headers and bodies never get a 500', async (t) => {
  const { api } = await buildTestApp(t);
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...METHODS),
      fc.constantFrom(...PATHS),
      fc.string({ maxLength: 80 }),
      fc.constantFrom(...TYPES),
      fc.option(fc.string({ maxLength: 20 })),
      fc.option(fc.string({ maxLength: 40 })),
      fc.oneof(fc.string({ maxLength: 200 }), fc.json({ maxDepth: 3 })),
      async (method, path, query, contentType, version, accept, body) => {
        const headers: Record<string, string> = {};
        if (contentType) headers['content-type'] = contentType;
        if (version !== null) headers['service-api-version'] = version;
        if (accept !== null) headers.accept = accept;
        const response = await api.inject({
          method,
          url: `${path}?${encodeURIComponent(query)}=${encodeURIComponent(query)}&filter%5B${encodeURIComponent(query)}%5D=1`,
          headers,
          ...(method === 'GET' || method === 'DELETE' || method === 'OPTIONS' ? {} : { payload: body }),
        });
        assert.ok(
          response.statusCode < 500,
          `${method} ${path} answered ${response.statusCode}: ${response.body}`,
        );
      },
    ),
    { seed: 20_261_122, numRuns: 300 },
  );
});
