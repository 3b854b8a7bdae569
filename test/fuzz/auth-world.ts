import type { TestContext } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.ts';
import { createOrganization, createWorker } from '../helpers/factories.ts';
import { hiddenField } from '../helpers/http-browser.ts';
import { clientToken, createTestClient, createTestPerson, userToken } from '../helpers/tokens.ts';
import type { Shape } from './answer-shapes.ts';
import { DatabaseWatch } from './database-fingerprint.ts';
import { routesOf } from './route-catalog.ts';

export const REDIRECT = 'https://partner.example/callback';
export const PASSWORD = 'correct horse battery';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

/** Cookies by name, as a browser keeps them for one site (paths are ignored: every request here is on it). */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  store(response: LightMyRequestResponse): void {
    for (const cookie of response.cookies as {
      name: string;
      value: string;
      maxAge?: number;
      expires?: Date;
    }[]) {
      const gone =
        cookie.value === '' || cookie.maxAge === 0 || (cookie.expires && cookie.expires < new Date());
      if (gone) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** An interaction waiting for the person (sign-in) or for their consent, with what its forms need. */
export interface LiveInteraction {
  uid: string;
  jar: CookieJar;
  csrf: string;
}

/**
 * One operation of the authorization server: where it is, how it answers failures, and its valid requests.
 */
export interface AuthOperation {
  name: string;
  method: string;
  /** The path; `{uid}` stands for a live interaction's id. */
  path: string;
  shape: Shape;
  /** Valid query strings and form bodies (one per kind of valid request). */
  queries: [string, string][][];
  forms: [string, string][][];
  /** `Authorization` values: the first is the valid one (or none, ''), the others must be refused. */
  authorizations: string[];
  /** What kind of interaction the path needs. */
  interaction?: 'sign-in' | 'consent';
}

export interface AuthWorld {
  app: TestApp;
  watch: DatabaseWatch;
  operations: AuthOperation[];
  /** A new interaction at the sign-in page, or (for a signed-in browser) at the consent page. */
  interaction(kind: 'sign-in' | 'consent'): Promise<LiveInteraction>;
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const basicOf = (bytes: Buffer | string) => `Basic ${Buffer.from(bytes).toString('base64')}`;

/**
 * The authorization server with a confidential client, a person with a password, a worker on a roster who may
 * sign up, tokens to revoke and introspect, and a browser signed in (to reach the consent page). Its
 * operations are read from the server: the endpoints its discovery document names, and the interaction pages
 * its router has.
 */
export async function buildAuthWorld(t: TestContext): Promise<AuthWorld> {
  // The sign-in throttle is tested on its own; here it would turn most sign-ins into 429 before any check.
  const app = await buildTestApp(t, { EWA_LOGIN_FAILURES_BEFORE_BACKOFF: '100' });
  const client = await createTestClient(app, { redirectUris: [REDIRECT] });
  const personId = await createTestPerson(app, { password: PASSWORD });
  const email = `${personId}@people.example`;
  const organizationId = await createOrganization(app);
  const rostered = await createWorker(app, organizationId, { employeeId: 'E-FUZZ-1' });
  const rosterEmail = `${rostered.personId}@people.example`;
  const accessToken = await clientToken(app, ['health:read'], client);
  const personToken = await userToken(app, personId, ['user:read'], client.clientId);

  const authorizationQuery: [string, string][] = [
    ['client_id', client.clientId],
    ['response_type', 'code'],
    ['redirect_uri', REDIRECT],
    ['scope', 'openid user:read'],
    ['state', 'fuzz-state'],
    ['nonce', 'fuzz-nonce'],
    ['code_challenge', CHALLENGE],
    ['code_challenge_method', 'S256'],
  ];

  async function interaction(kind: 'sign-in' | 'consent', jar = new CookieJar()): Promise<LiveInteraction> {
    const query = new URLSearchParams(authorizationQuery).toString();
    const started = await app.auth.inject({
      method: 'GET',
      url: `/oauth2/auth?${query}`,
      headers: { cookie: (kind === 'consent' ? signedIn : jar).header() },
    });
    const session = kind === 'consent' ? new CookieJar() : jar;
    if (kind === 'consent') for (const [name, value] of signedIn.cookies) session.cookies.set(name, value);
    session.store(started);
    const location = String(started.headers.location ?? '');
    const uid = /\/interaction\/([^/?]+)/.exec(location)?.[1];
    if (started.statusCode !== 303 || !uid)
      throw new Error(`authorization: ${started.statusCode} ${location}`);
    const page = await app.auth.inject({
      method: 'GET',
      url: `/interaction/${uid}`,
      headers: { cookie: session.header(), accept: 'text/html' },
    });
    session.store(page);
    return { uid, jar: session, csrf: hiddenField(page.body, 'csrf') };
  }

  // A browser that signed in once: its session cookies bring every new authorization to the consent page.
  const signedIn = new CookieJar();
  const first = await interaction('sign-in', signedIn);
  const login = await app.auth.inject({
    method: 'POST',
    url: `/interaction/${first.uid}/login`,
    headers: { cookie: signedIn.header(), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ csrf: first.csrf, email, password: PASSWORD }).toString(),
  });
  signedIn.store(login);
  const resumed = await app.auth.inject({
    method: 'GET',
    url: new URL(String(login.headers.location), 'http://auth.test').pathname,
    headers: { cookie: signedIn.header() },
  });
  signedIn.store(resumed);
  if (!/\/interaction\//.test(String(resumed.headers.location)))
    throw new Error('sign-in did not reach consent');

  const discovery = (
    await app.auth.inject({ method: 'GET', url: '/.well-known/openid-configuration' })
  ).json() as Record<string, unknown>;
  const pathOf = (key: string) =>
    typeof discovery[key] === 'string' ? new URL(discovery[key] as string).pathname : undefined;
  const credentials: [string, string][] = [
    ['client_id', client.clientId],
    ['client_secret', client.secret],
  ];
  const clientAuthorizations = [
    '',
    basic(client.clientId, client.secret),
    basic(client.clientId, 'wrong secret'),
    'Basic',
    'Basic !!!',
    basicOf('%zz:%zz'),
    basicOf(Buffer.from([0xff, 0xfe, 0x3a, 0x41])),
    basicOf('no-colon'),
    basicOf(`${client.clientId}:\u0000`),
    basicOf(':'),
    basicOf('x'.repeat(8000)),
    `Bearer ${accessToken}`,
  ];
  const endpoints: Record<string, Omit<AuthOperation, 'name' | 'path'>> = {
    token_endpoint: {
      method: 'POST',
      shape: 'oauth-json',
      queries: [[]],
      forms: [
        [['grant_type', 'client_credentials'], ['scope', 'health:read'], ...credentials],
        [
          ['grant_type', 'authorization_code'],
          ['code', 'fuzz-code'],
          ['redirect_uri', REDIRECT],
          ['code_verifier', VERIFIER],
          ...credentials,
        ],
        [['grant_type', 'refresh_token'], ['refresh_token', 'fuzz-refresh-token'], ...credentials],
      ],
      authorizations: clientAuthorizations,
    },
    revocation_endpoint: {
      method: 'POST',
      shape: 'oauth-json',
      queries: [[]],
      forms: [[['token', accessToken], ['token_type_hint', 'access_token'], ...credentials]],
      authorizations: clientAuthorizations,
    },
    introspection_endpoint: {
      method: 'POST',
      shape: 'oauth-json',
      queries: [[]],
      forms: [[['token', accessToken], ['token_type_hint', 'access_token'], ...credentials]],
      authorizations: clientAuthorizations,
    },
    userinfo_endpoint: {
      method: 'GET',
      shape: 'oauth-json',
      queries: [[]],
      forms: [[]],
      authorizations: [
        `Bearer ${personToken}`,
        '',
        'Bearer',
        `Bearer ${accessToken}x`,
        basic(client.clientId, client.secret),
      ],
    },
    jwks_uri: { method: 'GET', shape: 'oauth-json', queries: [[]], forms: [[]], authorizations: [''] },
    authorization_endpoint: {
      method: 'GET',
      shape: 'html',
      queries: [
        authorizationQuery,
        [...authorizationQuery, ['prompt', 'login'], ['max_age', '0'], ['ui_locales', 'en']],
      ],
      forms: [[]],
      authorizations: [''],
    },
    end_session_endpoint: {
      method: 'GET',
      shape: 'html',
      queries: [
        [
          ['client_id', client.clientId],
          ['state', 'fuzz-state'],
          ['id_token_hint', 'e30.e30.e30'],
        ],
      ],
      forms: [[]],
      authorizations: [''],
    },
  };
  const operations: AuthOperation[] = [];
  for (const [key, value] of Object.entries(discovery)) {
    const path = key === 'jwks_uri' || key.endsWith('_endpoint') ? pathOf(key) : undefined;
    if (!path) continue;
    // An endpoint added later is fuzzed as a protocol endpoint with the client's credentials, until it has
    // its own.
    const operation = endpoints[key] ?? {
      method: 'POST',
      shape: 'oauth-json',
      queries: [[]],
      forms: [credentials],
      authorizations: clientAuthorizations,
    };
    operations.push({ name: `${operation.method} ${path}`, path, ...operation });
    if (typeof value === 'string' && key === 'end_session_endpoint') {
      operations.push({
        ...operation,
        name: `POST ${path}/confirm`,
        method: 'POST',
        path: `${path}/confirm`,
        queries: [[]],
        forms: [
          [
            ['xsrf', 'fuzz-xsrf'],
            ['logout', 'yes'],
          ],
        ],
      });
    }
  }
  for (const document of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'])
    operations.push({
      name: `GET ${document}`,
      method: 'GET',
      path: document,
      shape: 'oauth-json',
      queries: [[]],
      forms: [[]],
      authorizations: [''],
    });

  // The pages of our own routes: every interaction route the router has, with the form its page carries.
  const pageForms: Record<string, [string, string][][]> = {
    login: [
      [
        ['email', email],
        ['password', PASSWORD],
      ],
      [
        ['email', email.toUpperCase()],
        ['password', 'wrong password'],
      ],
    ],
    signup: [
      [
        ['email', rosterEmail],
        ['employee_id', 'E-FUZZ-1'],
        ['password', 'a new password 1'],
      ],
    ],
    consent: [[['decision', 'allow']], [['decision', 'deny']]],
  };
  for (const route of routesOf(app.auth).filter((route) => route.path.startsWith('/interaction/'))) {
    const step = route.path.split('/')[3] ?? '';
    const forms = route.method === 'POST' ? (pageForms[step] ?? [[]]) : [[]];
    operations.push({
      name: `${route.method} ${route.path.replace(':uid', '{uid}')}`,
      method: route.method,
      path: route.path.replace(':uid', '{uid}'),
      shape: 'html',
      queries: [[]],
      forms: forms.map((fields) => (route.method === 'POST' ? [['csrf', '(live)'], ...fields] : fields)),
      authorizations: [''],
      interaction: step === 'consent' ? 'consent' : 'sign-in',
    });
  }
  return { app, watch: new DatabaseWatch(app.database.db), operations, interaction };
}
