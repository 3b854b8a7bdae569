import type { TestContext } from 'node:test';
import { buildTestApp, type TestApp, type TestAppOptions } from './build-test-app.ts';
import { freePort } from './free-port.ts';

export interface ListeningApp extends TestApp {
  authUrl: string;
  apiUrl: string;
}

/**
 * The test app on real ports of 127.0.0.1, with its public URLs set to them: for clients that speak HTTP on
 * their own (openid-client, a browser) and check that the issuer is where they found it.
 */
export async function buildListeningApp(
  t: TestContext,
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<ListeningApp> {
  // A port found free can be taken by another process before we listen on it: then try two other ports.
  for (let attempt = 1; ; attempt += 1) {
    const [authPort, apiPort] = [await freePort(), await freePort()];
    const authUrl = `http://127.0.0.1:${authPort}`;
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const app = await buildTestApp(t, { EWA_AUTH_URL: authUrl, EWA_BASE_URL: apiUrl, ...env }, options);
    try {
      await app.auth.listen({ port: authPort, host: '127.0.0.1' });
      await app.api.listen({ port: apiPort, host: '127.0.0.1' });
      return { ...app, authUrl, apiUrl };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= PORT_ATTEMPTS) throw error;
      await Promise.all([app.api.close(), app.auth.close(), app.payments.close()]);
    }
  }
}

const PORT_ATTEMPTS = 5;
