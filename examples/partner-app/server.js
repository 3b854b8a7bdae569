/**
 * The partner app's backend: serves the page, signs people in, calls the EWA REST API for them, and receives the
 * EWA server's webhooks. node:http only; `npm start` (or `node server.js`) against a running EWA server.
 *
 * Who holds the tokens: this backend. It signs people in with the public client (authorization code + PKCE, no
 * secret, as the sandbox's demo client is registered) and keeps their tokens in its memory, behind an HttpOnly
 * session cookie; the page never sees a token. The page talks to EWA directly only to tokenize a card, so that the
 * card number never passes through this server: the backend gets the card token instead.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from './config.js';
import { ApiError, addBankAccount, addCard, createTransfer, overview } from './ewa-api.js';
import { OAuthClient } from './oauth.js';
import { Sessions } from './sessions.js';
import { WebhookReceiver } from './webhooks.js';

const BODY_MAX_BYTES = 64 * 1024;
const PUBLIC = fileURLToPath(new URL('public/', import.meta.url));
const STATIC = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
  '/style.css': ['style.css', 'text/css; charset=utf-8'],
};

const config = loadConfig();
const oauth = new OAuthClient(config);
const sessions = new Sessions();
const webhooks = new WebhookReceiver(config, oauth, (event) => {
  // Events of the transfers of one person go to that person's pages only.
  const personId = event.data?.relationships?.person?.data?.id;
  console.log(`webhook ${event.type} ${event.id} (verified) for transfer ${event.data?.id}`);
  if (personId) sessions.publish(personId, event);
});
let webhookProblem;

/** The page's rules for the browser: its own scripts and styles only, and calls to this app and card tokenization. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  `connect-src 'self' ${new URL(config.paymentsUrl).origin}`,
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const routes = {
  'GET /login': async (request, response) => {
    const session = sessions.findOrStart(request, response);
    const { url, pending } = await oauth.startSignIn();
    session.pending = pending;
    redirect(response, url);
  },

  'GET /callback': async (request, response, url) => {
    const session = sessions.findOrStart(request, response);
    const pending = session.pending;
    session.pending = undefined;
    try {
      const tokens = await oauth.finishSignIn(url.searchParams, pending);
      session.personId = await oauth.subject(tokens.accessToken);
      session.tokens = tokens;
      sessions.renew(session, response);
      redirect(response, '/');
    } catch (error) {
      redirect(response, `/?error=${encodeURIComponent(error.message)}`);
    }
  },

  'POST /logout': async (request, response) => {
    const session = sessions.find(request);
    if (session) sessions.end(session, response);
    response.writeHead(204).end();
  },

  'GET /favicon.ico': async (_request, response) => {
    response.writeHead(204).end();
  },

  'GET /api/session': async (request, response) => {
    const session = sessions.find(request);
    sendJson(response, 200, {
      signed_in: Boolean(session?.tokens),
      card_tokenization_url: `${config.paymentsUrl}/v2/cards/generic`,
      webhooks: webhooks.endpointId
        ? { status: 'REGISTERED', endpoint_id: webhooks.endpointId, url: config.webhookUrl }
        : { status: 'NOT_REGISTERED', problem: webhookProblem ?? 'registering…' },
    });
  },

  'GET /api/overview': signedIn(async ({ token }) => overview(config.apiUrl, token)),

  'POST /api/cards': signedIn(async ({ token, personId, body }) =>
    addCard(config.apiUrl, token, personId, body),
  ),

  'POST /api/bank-accounts': signedIn(async ({ token, personId, body }) =>
    addBankAccount(config.apiUrl, token, personId, body),
  ),

  // A preview gets a new key each time; the transfer itself uses the key the page made with its preview, so that
  // pressing the button twice, or retrying after a network error, makes one transfer.
  'POST /api/transfers': signedIn(async ({ token, personId, body }) =>
    createTransfer(
      config.apiUrl,
      token,
      personId,
      body,
      body.preview ? randomUUID() : String(body.idempotency_key ?? ''),
    ),
  ),

  'GET /api/events': async (request, response) => {
    const session = sessions.find(request);
    if (!session?.tokens) return sendJson(response, 401, { errors: [{ detail: 'Sign in first.' }] });
    sessions.subscribe(session, response);
  },

  'POST /webhooks': async (request, response) => {
    const status = webhooks.receive(await readBody(request), request.headers);
    response.writeHead(status).end();
  },
};

/** A JSON API route of the page, for a signed-in session, with the person's fresh token and the JSON body. */
function signedIn(handler) {
  return async (request, response) => {
    const session = sessions.find(request);
    if (!session?.tokens) return sendJson(response, 401, { errors: [{ detail: 'Sign in first.' }] });
    let body = {};
    if (request.method === 'POST') {
      // Only JSON: a form on another site cannot send it without a preflight this server never answers.
      if (!String(request.headers['content-type']).startsWith('application/json'))
        return sendJson(response, 415, { errors: [{ detail: 'Send JSON.' }] });
      try {
        body = JSON.parse((await readBody(request)).toString('utf8') || '{}');
      } catch {
        return sendJson(response, 400, { errors: [{ detail: 'The body is not JSON.' }] });
      }
    }
    try {
      session.tokens = await oauth.refresh(session.tokens);
    } catch (error) {
      // The refresh token expired or was revoked: the person signs in again.
      session.tokens = undefined;
      return sendJson(response, 401, { errors: [{ detail: error.message }] });
    }
    try {
      const result = await handler({ token: session.tokens.accessToken, personId: session.personId, body });
      sendJson(response, 200, result);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 401) session.tokens = undefined;
      sendJson(response, error.status, { errors: error.errors });
    }
  };
}

async function serveStatic(path, response) {
  const [file, type] = STATIC[path];
  response.writeHead(200, {
    'content-type': type,
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-cache',
  });
  response.end(await readFile(join(PUBLIC, file)));
}

async function readBody(request) {
  const chunks = [];
  let size = 0;
  for await (const chunk of request) {
    size += chunk.length;
    if (size > BODY_MAX_BYTES) throw new Error('body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function sendJson(response, status, value) {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify(value));
}

function redirect(response, location) {
  response.writeHead(302, { location }).end();
}

const server = createServer(async (request, response) => {
  const url = new URL(request.url ?? '/', config.appUrl);
  try {
    const route = routes[`${request.method} ${url.pathname}`];
    if (route) await route(request, response, url);
    else if (request.method === 'GET' && STATIC[url.pathname]) await serveStatic(url.pathname, response);
    else sendJson(response, 404, { errors: [{ detail: 'Not found.' }] });
  } catch (error) {
    console.error(error);
    if (!response.headersSent) sendJson(response, 502, { errors: [{ detail: error.message }] });
    else response.end();
  }
});

async function registerWebhooks() {
  try {
    const endpoint = await webhooks.register();
    webhookProblem = undefined;
    console.log(`Webhook endpoint ${endpoint.id} registered for ${config.webhookUrl}`);
  } catch (error) {
    // The rest of the app works without webhooks; transfers then show the status they were made with.
    webhookProblem = error.message;
    console.error(`Could not register the webhook endpoint: ${error.message}`);
  }
}

let stopping = false;
async function stop() {
  // Ctrl+C under `npm start` arrives twice (the terminal's and npm's): stop once.
  if (stopping) return;
  stopping = true;
  await webhooks
    .unregister()
    .catch((error) => console.error(`Could not remove the webhook endpoint: ${error.message}`));
  server.closeAllConnections();
  server.close(() => process.exit(0));
}

server.listen(config.port, config.host, async () => {
  console.log(`Partner app on ${config.appUrl} (EWA API ${config.apiUrl}, sign-in ${config.authUrl})`);
  await registerWebhooks();
});
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
