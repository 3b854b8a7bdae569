/**
 * Everything the app can be told, from the environment, with the local sandbox's values as defaults (the EWA
 * server's `npm start`: REST API on 8080, authorization server on 8081, card tokenization on 8082).
 */
export function loadConfig(env = process.env) {
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new Error('PORT must be a port number.');
  const appUrl = trimSlash(env.APP_URL ?? `http://localhost:${port}`);
  return {
    port,
    host: env.HOST ?? 'localhost',
    /** Where browsers reach this app: the redirect URI registered for the client is `${appUrl}/callback`. */
    appUrl,
    // EWA_BASE_URL is the server's own name for it: a shell set up for the server works for the app too.
    apiUrl: trimSlash(env.EWA_API_URL ?? env.EWA_BASE_URL ?? 'http://localhost:8080'),
    authUrl: trimSlash(env.EWA_AUTH_URL ?? 'http://localhost:8081'),
    paymentsUrl: trimSlash(env.EWA_PAYMENTS_URL ?? 'http://localhost:8082'),
    /** The public client people sign in with (PKCE, no secret). */
    clientId: env.CLIENT_ID ?? 'demo-partner-mobile',
    /** The confidential client that registers the webhook endpoint (scope client:admin). */
    serverClientId: env.SERVER_CLIENT_ID ?? 'demo-partner-server',
    serverClientSecret: env.SERVER_CLIENT_SECRET ?? 'demo-partner-secret',
    /** What the EWA server POSTs webhooks to. */
    webhookUrl: env.PUBLIC_URL ?? `${appUrl}/webhooks`,
  };
}

function trimSlash(url) {
  return new URL(url).href.replace(/\/+$/, '');
}
