import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-test-app.ts';

// A process that drains answers every request with Connection: close, so that clients move their kept-alive
// connections elsewhere before its listeners close, whoever writes the answer (Fastify, or oidc-provider on the
// raw response of the authorization server).

test('while draining, every listener answers with Connection: close; before, connections stay open', async (t) => {
  const app = await buildTestApp(t);
  const asks = [
    () => app.api.inject({ url: '/livez' }),
    () => app.api.inject({ url: '/rest/health' }),
    () => app.auth.inject({ url: '/.well-known/openid-configuration' }),
    () => app.auth.inject({ url: '/nothing-here' }),
    () => app.payments.inject({ url: '/livez' }),
  ];
  for (const ask of asks) assert.notEqual((await ask()).headers.connection, 'close');
  app.readiness.drain();
  for (const ask of asks) {
    const answer = await ask();
    assert.equal(answer.headers.connection, 'close', `${answer.statusCode} ${answer.body.slice(0, 100)}`);
  }
  assert.equal((await app.auth.inject({ url: '/.well-known/openid-configuration' })).statusCode, 200);
});
