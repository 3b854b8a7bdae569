import type { Config } from '../config.ts';
import { DOCS_PREFIX } from '../platform/json-api.ts';
import { DEMO } from '../seed/demo.ts';

/**
 * In the sandbox, the reference page (swagger-ui at /rest/docs) signs in with the demo clients: its redirect URI is
 * registered for them, and its origin may call the token endpoint for them (the confidential one included, whose
 * secret is published). In production it is undefined: nothing demo-specific is registered.
 */
export interface ReferencePageSignIn {
  /** swagger-ui's oauth2-redirect page, where @fastify/swagger-ui points it (`./static/oauth2-redirect.html`). */
  redirectUri: string;
  origin: string;
  clientIds: readonly string[];
  /** Prefilled in the page's Authorize dialog. */
  prefilledClientId: string;
}

export function referencePageSignIn(config: Config): ReferencePageSignIn | undefined {
  if (config.env !== 'uat') return undefined;
  return {
    redirectUri: `${config.api.publicUrl}${DOCS_PREFIX}/static/oauth2-redirect.html`,
    origin: new URL(config.api.publicUrl).origin,
    clientIds: [DEMO.clients.public.clientId, DEMO.clients.confidential.clientId],
    prefilledClientId: DEMO.clients.public.clientId,
  };
}
