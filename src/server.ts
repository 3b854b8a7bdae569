import cluster from 'node:cluster';
import type { Server } from 'node:http';
import type { Writable } from 'node:stream';
import Fastify, {
  type FastifyHttpOptions,
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyPluginCallback,
} from 'fastify';
import { adminRoutes } from './admin/routes.ts';
import { OPERATOR } from './admin/schemas.ts';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { serverJobs } from './jobs/server-jobs.ts';
import { createMoneyCore, type MoneyCore } from './money/money-core.ts';
import {
  authApp,
  authConnectionAnswer,
  authFrameworkErrors,
  authListenerErrors,
  authNotFound,
} from './oauth/auth-app.ts';
import { longestSignedTokenLifetimeSeconds } from './oauth/provider-setup.ts';
import { referencePageSignIn } from './oauth/reference-page.ts';
import { ensureSigningKey } from './oauth/signing-keys.ts';
import { AccessLogController, accessLogPlugin } from './platform/access-log.ts';
import { AccessTokenVerifier } from './platform/access-tokens.ts';
import { bearerAuthPlugin } from './platform/bearer-auth.ts';
import { closingConnectionsPlugin } from './platform/closing-connections.ts';
import { errorsPagePlugin } from './platform/errors-page.ts';
import { ignoreUnknownExpectations } from './platform/expectations.ts';
import { edgeErrorOptions, refuseConnect } from './platform/framework-errors.ts';
import { jsonApiPlugin } from './platform/json-api.ts';
import { listenerLimits } from './platform/listener-limits.ts';
import { loadSheddingPlugin, refuseOnAuthServer } from './platform/load-shedding.ts';
import { loggerOptions } from './platform/logger.ts';
import { JSON_API_MEDIA, JSON_MEDIA } from './platform/media-types.ts';
import type { Metrics } from './platform/metrics.ts';
import { oneHostPlugin } from './platform/one-host.ts';
import { openApiPlugin } from './platform/openapi.ts';
import { probeRoutes } from './platform/probe-routes.ts';
import { Readiness } from './platform/readiness.ts';
import { requestIdOf } from './platform/request-id.ts';
import { lazyRequestLogger } from './platform/request-logger.ts';
import { restCorsPlugin } from './platform/rest-cors.ts';
import { RevocationList } from './platform/revocations.ts';
import { securityHeadersPlugin } from './platform/security-headers.ts';
import type { PaymentRail } from './rails/payment-rail.ts';
import { accountRoutes } from './resources/accounts/routes.ts';
import { disclosureRoutes } from './resources/disclosures/routes.ts';
import { healthRoutes } from './resources/health/routes.ts';
import { jobRoutes } from './resources/jobs/routes.ts';
import { organizationRoutes } from './resources/organizations/routes.ts';
import { overpaymentRoutes } from './resources/overpayments/routes.ts';
import { paycheckRoutes } from './resources/paychecks/routes.ts';
import { peopleRoutes } from './resources/people/routes.ts';
import { transferRoutes } from './resources/transfers/routes.ts';
import { webhookEndpointRoutes } from './resources/webhook-endpoints/routes.ts';
import { SandboxClock } from './sandbox/sandbox-clock.ts';
import { SandboxControls } from './sandbox/sandbox-controls.ts';
import { CardTokenKeys } from './tokenization/card-token.ts';
import { CardTokenizer } from './tokenization/card-tokenizer.ts';
import { CorsPolicy } from './tokenization/cors-policy.ts';
import { cardListenerErrors, cardListenerNotFound, cardTokenRoutes } from './tokenization/routes.ts';
import { webhookJobs } from './webhooks/webhook-jobs.ts';
import { createWebhooks, type Webhooks } from './webhooks/webhooks.ts';

export interface ServerDeps {
  database: Database;
  /** Where log lines go; standard output when absent. Tests pass a buffer to read what was logged. */
  logStream?: Writable;
  newId?: () => string;
  /** The clock; tests fix it. */
  now?: () => Date;
  /** Off only to measure what the bearer check costs (benchmarks). */
  bearerCheck?: boolean;
  /** The payment rail; the sandbox rail when absent. */
  rail?: PaymentRail;
  /** OpenTelemetry (src/platform/tracing.ts): a span for every request of the three listeners. */
  tracing?: { fastifyPlugin(): FastifyPluginCallback };
  /** More routes for the REST listener, registered inside the JSON:API platform (embedding, tests). */
  extraApiRoutes?: FastifyPluginAsync;
}

export interface Servers {
  /** The money services the scheduled work shares with the API. */
  money: MoneyCore;
  /** The sandbox's clock and reset (refusing in production); `sandbox.now` is the money work's clock. */
  sandbox: SandboxControls;
  /** Webhook endpoints, the event log and the dispatcher that delivers events. */
  webhooks: Webhooks;
  api: FastifyInstance;
  auth: FastifyInstance;
  payments: FastifyInstance;
  /** The Prometheus metrics of the three listeners, the pool and the database; absent when EWA_METRICS_PORT is unset. */
  metrics?: Metrics;
  /** What /readyz answers: `ewa serve` drains it when asked to stop. */
  readiness: Readiness;
}

function fastifyOptions(config: Config, deps: ServerDeps, listener: string): FastifyHttpOptions<Server> {
  const limits = listenerLimits(config.http);
  const logger = { ...loggerOptions(config), ...(deps.logStream ? { stream: deps.logStream } : {}) };
  return {
    // A worker of `ewa serve --workers` names itself, so that its lines can be told from its siblings'.
    logger: { ...logger, base: cluster.isWorker ? { listener, pid: process.pid } : { listener } },
    genReqId: (request) => requestIdOf(request, deps.newId),
    childLoggerFactory: lazyRequestLogger,
    // One access line per request comes from access-log.ts instead of Fastify's two; Fastify's error lines stay.
    logController: new AccessLogController(),
    bodyLimit: config.bodyLimitBytes,
    // Request, header, connection and keep-alive time limits: no slow or silent client holds a connection.
    ...limits,
    // Node answers an HTTP/1.1 request without Host with a bare 400 of its own; one-host.ts answers it in ours.
    http: { ...limits.http, requireHostHeader: false },
    // A request that reaches a listener while it closes (on a connection accepted just before, or kept alive) is
    // answered, with `Connection: close`, rather than refused: a rolling restart of workers then loses none.
    return503OnClosing: false,
    trustProxy:
      config.trustProxy === true || config.trustProxy === false ? config.trustProxy : [...config.trustProxy],
    // Bodies are validated as sent: no silent coercion of "100" into 100, no silent dropping of fields.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
  };
}

/** Builds the three applications of DESIGN §1. Nothing listens here: `ewa serve` and the tests decide that. */
export async function buildServer(config: Config, deps: ServerDeps): Promise<Servers> {
  const now = deps.now ?? (() => new Date());
  const { db } = deps.database;
  await ensureSigningKey(db, config.masterKey);
  const revocations = new RevocationList(db, config.oauth.revocationPollMs);
  await revocations.start();
  const verifier = new AccessTokenVerifier({
    db,
    masterKey: config.masterKey,
    issuer: config.auth.publicUrl,
    audience: config.api.publicUrl,
    revocations,
    cacheMax: config.oauth.tokenCacheMax,
    longestTokenLifetimeSeconds: longestSignedTokenLifetimeSeconds(config),
    now,
  });
  await verifier.init();
  // One key set for issuing card tokens and for taking them back; one tokenizer for both listeners that serve it,
  // so that its rate limits count both paths together.
  const cardTokenKeys = await CardTokenKeys.fromConfig(config.cards.tokenKeys);
  const api = Fastify({
    ...fastifyOptions(config, deps, 'api'),
    ...edgeErrorOptions({ mediaType: JSON_API_MEDIA, baseUrl: config.api.publicUrl, newId: deps.newId }),
  });
  // Loaded only when used: ioredis is a few MB of every process's heap (docs/design/performance.md#memory).
  const redis = config.redisUrl
    ? await (await import('./platform/redis.ts')).connectRedis(config.redisUrl, api.log)
    : undefined;
  const cardTokens = {
    tokenizer: CardTokenizer.create(config, cardTokenKeys, now),
    cors: new CorsPolicy(config.cards.corsOrigins),
    errorsBaseUrl: config.api.publicUrl,
    redis,
    limits: {
      perClientPerMinute: config.cards.tokensPerIpPerMinute,
      perCardPerMinute: config.cards.tokensPerCardPerMinute,
    },
  };
  const readiness = new Readiness(deps.database, config.healthDbTimeoutMs);

  // The money work's clock: in UAT the sandbox's (real time plus the offset `ewa sandbox advance` moves, re-read
  // every second); tokens, sign-in and card tokens keep real time, so nothing expires because the sandbox moved.
  const sandboxClock = config.env === 'uat' ? await SandboxClock.open(db, now) : undefined;
  const moneyNow = sandboxClock?.now ?? now;
  const money = createMoneyCore(db, config, {
    rail: deps.rail,
    logger: api.log,
    now: moneyNow,
    realNow: now,
  });
  const sandbox = new SandboxControls({
    db,
    config,
    clock: sandboxClock,
    jobs: serverJobs(money, config),
    soleProcess: deps.database.kind === 'pglite',
    realNow: now,
  });
  // A reset by any process replaces the system ledger accounts this process remembers.
  sandboxClock?.onReset(() => money.ledger.forget());
  sandboxClock?.startRefreshing();
  // Webhooks count their retry window on the money work's clock: the events they carry are stamped with it.
  const webhooks = createWebhooks(db, config, {
    logger: api.log,
    now: moneyNow,
    realNow: now,
    payable: money.rail.destinations,
    instant: money.rail.instantDestinations,
  });
  api.addHook('onClose', async () => {
    await Promise.all([money.outbox.stop(), webhooks.dispatcher.stop()]);
    revocations.stop();
    sandboxClock?.stop();
    redis?.disconnect();
  });
  // Counted only when someone scrapes them: with EWA_METRICS_PORT unset a request pays nothing for metrics.
  // prom-client is loaded only then (docs/design/performance.md#memory).
  const metrics = config.metrics
    ? new (await import('./platform/metrics.ts')).Metrics({
        database: deps.database,
        now: moneyNow,
        jobs: [...serverJobs(money, config), ...webhookJobs(webhooks, config, now)],
        databaseTimeoutMs: config.healthDbTimeoutMs,
      })
    : undefined;
  if (deps.tracing) await api.register(deps.tracing.fastifyPlugin());
  await api.register(accessLogPlugin);
  await api.register(oneHostPlugin);
  await api.register(closingConnectionsPlugin, { readiness });
  if (metrics) await api.register(metrics.httpPlugin, { listener: 'api' });
  await api.register(securityHeadersPlugin, { config, listener: 'api' });
  await api.register(jsonApiPlugin, { baseUrl: config.api.publicUrl });
  // After the JSON:API platform, so that the preflight route it adds (OPTIONS *) answers its errors (a body that is
  // not UTF-8, say) as error documents; its hook still answers a preflight before the token check.
  await api.register(restCorsPlugin, { origins: config.corsOrigins });
  // After the JSON:API hooks (a refusal carries X-Request-Id), before the token check (a refusal costs nothing).
  await api.register(loadSheddingPlugin, { config: config.loadShedding });
  await api.register(bearerAuthPlugin, { verifier, enabled: deps.bearerCheck !== false });
  await api.register(openApiPlugin, {
    baseUrl: config.api.publicUrl,
    authUrl: config.auth.publicUrl,
    prefilledClientId: referencePageSignIn(config)?.prefilledClientId,
  });
  await api.register(errorsPagePlugin);
  await api.register(probeRoutes, { readiness });
  await api.register(healthRoutes, {
    database: deps.database,
    dbTimeoutMs: config.healthDbTimeoutMs,
    baseUrl: config.api.publicUrl,
  });
  await api.register(organizationRoutes, { db, baseUrl: config.api.publicUrl });
  await api.register(adminRoutes, {
    db,
    databaseKind: deps.database.kind,
    baseUrl: config.api.publicUrl,
    now: moneyNow,
    earnings: money.earnings,
    sandbox,
  });
  await api.register(peopleRoutes, { db, baseUrl: config.api.publicUrl, now });
  await api.register(disclosureRoutes, { db, now: moneyNow });
  await api.register(overpaymentRoutes, { db, now: moneyNow });
  await api.register(jobRoutes, { db, baseUrl: config.api.publicUrl, now });
  await api.register(paycheckRoutes, { db, baseUrl: config.api.publicUrl });
  await api.register(accountRoutes, {
    db,
    config,
    now,
    cardTokenKeys,
    pricing: { now: moneyNow, payable: money.rail.destinations, instant: money.rail.instantDestinations },
  });
  await api.register(transferRoutes, {
    db,
    baseUrl: config.api.publicUrl,
    now: moneyNow,
    transfers: money.transfers,
    afterWrite: () => money.outbox.nudge(),
    idempotency: {
      ttlMs: config.money.idempotencyKeyTtlSeconds * 1000,
      lockMs: config.money.idempotencyLockSeconds * 1000,
      batchSizeMax: config.money.transferBatchMax,
      inFlightMax: config.money.transfersInFlightMax,
    },
  });
  const webhookRoutes = { webhooks, baseUrl: config.api.publicUrl, now };
  await api.register(webhookEndpointRoutes, {
    ...webhookRoutes,
    surface: '/rest',
    security: {
      config: [{ kind: 'client', scopes: ['client:admin'] }],
      openApi: [{ oauth_client_credentials_token: ['client:admin'] }],
    },
  });
  await api.register(webhookEndpointRoutes, { ...webhookRoutes, surface: '/admin', security: OPERATOR });
  await api.register(cardTokenRoutes, { ...cardTokens, path: '/cards/generic' });
  if (deps.extraApiRoutes) await api.register(deps.extraApiRoutes);

  const auth = Fastify({
    ...fastifyOptions(config, deps, 'auth'),
    clientErrorHandler: edgeErrorOptions({
      mediaType: JSON_MEDIA,
      baseUrl: config.api.publicUrl,
      newId: deps.newId,
      connectionAnswer: authConnectionAnswer,
    }).clientErrorHandler,
    frameworkErrors: authFrameworkErrors,
  });
  // Before any route: a route keeps the error handler its context had when it was added.
  auth.setErrorHandler(authListenerErrors);
  if (deps.tracing) await auth.register(deps.tracing.fastifyPlugin());
  await auth.register(accessLogPlugin);
  await auth.register(oneHostPlugin);
  await auth.register(closingConnectionsPlugin, { readiness });
  if (metrics) await auth.register(metrics.httpPlugin, { listener: 'auth' });
  await auth.register(securityHeadersPlugin, { config, listener: 'auth' });
  await auth.register(loadSheddingPlugin, { config: config.loadShedding, refuse: refuseOnAuthServer });
  await auth.register(probeRoutes, { readiness });
  await auth.register(authApp, { config, db, now });
  const payments = Fastify({
    ...fastifyOptions(config, deps, 'payments'),
    ...edgeErrorOptions({ mediaType: JSON_MEDIA, baseUrl: config.api.publicUrl, newId: deps.newId }),
  });
  payments.setErrorHandler(cardListenerErrors(config.api.publicUrl));
  if (deps.tracing) await payments.register(deps.tracing.fastifyPlugin());
  await payments.register(accessLogPlugin);
  await payments.register(oneHostPlugin);
  await payments.register(closingConnectionsPlugin, { readiness });
  if (metrics) await payments.register(metrics.httpPlugin, { listener: 'payments' });
  await payments.register(securityHeadersPlugin, { config, listener: 'payments' });
  await payments.register(loadSheddingPlugin, { config: config.loadShedding });
  await payments.register(probeRoutes, { readiness });
  for (const app of [auth, payments]) {
    app.addHook('onRequest', async (request, reply) => {
      reply.header('X-Request-Id', request.id);
    });
  }
  auth.setNotFoundHandler(authNotFound);
  payments.setNotFoundHandler(cardListenerNotFound('/v2/cards/generic', config.api.publicUrl));
  // After the hooks above, so that the card routes carry X-Request-Id; every other path stays a 404.
  await payments.register(cardTokenRoutes, { ...cardTokens, path: '/v2/cards/generic' });
  await Promise.all([api.ready(), auth.ready(), payments.ready()]);
  for (const app of [api, auth, payments]) {
    ignoreUnknownExpectations(app.server);
    refuseConnect(app.server);
  }
  return { money, webhooks, sandbox, api, auth, payments, readiness, ...(metrics ? { metrics } : {}) };
}
