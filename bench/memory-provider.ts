import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

/**
 * oidc-provider as its authors ship it, with its in-memory adapter, configured like ours for client_credentials
 * (ES256 JWT access tokens for one resource): the reference figure our database-backed server is compared with.
 * Prints "ready <port>".
 */
const resource = 'http://127.0.0.1/api';
const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
const provider = new Provider('http://127.0.0.1', {
  clients: [
    {
      client_id: 'bench',
      client_secret: 'bench-secret',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: 'health:read',
      id_token_signed_response_alg: 'ES256',
    },
  ],
  jwks: { keys: [{ ...key, kid: 'bench', alg: 'ES256', use: 'sig' }] },
  scopes: ['health:read'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => resource,
      getResourceServerInfo: async () => ({
        scope: 'health:read',
        audience: resource,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
  routes: { token: '/oauth2/token' },
});
const server = createServer(provider.callback());
server.listen(0, '127.0.0.1', () => console.log(`ready ${(server.address() as { port: number }).port}`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
