import { Buffer } from 'node:buffer';
import { hkdfSync } from 'node:crypto';
import { isIP } from 'node:net';
import { availableParallelism, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { isAbaRoutingNumber, UAT_ROUTING_NUMBER } from './domain/routing-number.ts';

/** Where the server's data lives: the embedded PGlite files, or a PostgreSQL server. */
export type DatabaseConfig =
  | {
      readonly kind: 'pglite';
      readonly dataDir: string;
      /** Where this machine keeps the fresh cluster initdb made (src/db/pglite-cluster.ts); undefined: none kept. */
      readonly templateDir: string | undefined;
      /** Whether a new cluster is made from the template shipped with the project, when there is one for its PGlite. */
      readonly shippedTemplate: boolean;
      /** Whether the process that holds a database on disk compiles its WebAssembly with V8's baseline compiler alone (HeapConfig). */
      readonly wasmLiftoffOnly: boolean;
      readonly limits: DatabaseLimits;
    }
  | {
      readonly kind: 'postgres';
      readonly url: string;
      readonly poolSize: number;
      readonly schema?: string;
      readonly limits: DatabaseLimits;
    };

/**
 * How long work may wait on the database before it is given up and answered 503 SERVICE_UNAVAILABLE. Set on every
 * PostgreSQL session the process opens (src/db/session-limits.ts); 0 turns a PostgreSQL limit off. The embedded
 * database is one session in this thread: only `connectTimeoutMs` applies to it.
 */
export interface DatabaseLimits {
  /** `statement_timeout`: the longest one statement may run. */
  readonly statementTimeoutMs: number;
  /** `lock_timeout`: the longest a statement may wait for a lock (a row, a table, an advisory lock). */
  readonly lockTimeoutMs: number;
  /** `idle_in_transaction_session_timeout`: a session idle this long inside a transaction is ended. */
  readonly idleInTransactionTimeoutMs: number;
  /** The longest a request waits for a connection: a new one, or one of a pool that is all in use. */
  readonly connectTimeoutMs: number;
}

/** What each listener allows a client, so that slow or silent clients cannot hold connections open. */
export interface HttpLimits {
  /** The whole request, headers and body, must arrive within this (node's `requestTimeout`); else 408. */
  readonly requestTimeoutMs: number;
  /** The headers must arrive within this (node's `headersTimeout`); at most `requestTimeoutMs`. */
  readonly headersTimeoutMs: number;
  /** A connection with no traffic either way for this long is closed (Fastify's `connectionTimeout`). */
  readonly connectionTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long (Fastify's `keepAliveTimeout`). */
  readonly keepAliveTimeoutMs: number;
}

/** When a listener refuses new requests with 503 because this process is overloaded (@fastify/under-pressure). */
export interface LoadSheddingConfig {
  /** Mean event-loop delay over a sample above which requests are refused; 0 turns shedding off. */
  readonly eventLoopDelayMs: number;
  /** How often the event-loop delay is sampled. */
  readonly sampleIntervalMs: number;
}

export interface ListenerConfig {
  readonly port: number;
  /** Public URL: absolute links and the OAuth issuer are built from it, never from the Host header. */
  readonly publicUrl: string;
}

export interface Config {
  readonly env: 'uat' | 'production';
  readonly host: string;
  readonly api: ListenerConfig;
  readonly auth: ListenerConfig;
  readonly payments: ListenerConfig;
  readonly database: DatabaseConfig;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** 32-byte key that encrypts secrets at rest (signing keys, account numbers). */
  readonly masterKey: Buffer;
  readonly usesDevelopmentKey: boolean;
  readonly seedDemoData: boolean;
  readonly bodyLimitBytes: number;
  readonly healthDbTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
  /**
   * After a stop is asked for, how long each process keeps serving with /readyz answering 503, so that a load
   * balancer takes it out of rotation before it stops accepting connections.
   */
  readonly drainDelayMs: number;
  /**
   * A worker of `ewa serve --workers` that has not answered its primary this long (its event loop stuck in a loop,
   * the process stopped) is killed and started again: it would keep being handed connections it never answers.
   */
  readonly workerStallTimeoutMs: number;
  readonly workers: WorkersConfig;
  /** The V8 heap flags `ewa serve` runs its processes with (src/cli/heap-flags.ts). */
  readonly heap: HeapConfig;
  /** Redis, when set: rate limits shared by every process and host (src/platform/shared-store.ts). */
  readonly redisUrl: string | undefined;
  readonly http: HttpLimits;
  readonly loadShedding: LoadSheddingConfig;
  /**
   * Web origins whose pages may call the REST API (/rest, /admin) and the authorization server's token and
   * discovery endpoints from a browser (CORS); `*` for any.
   */
  readonly corsOrigins: readonly string[];
  /**
   * Proxies whose X-Forwarded-For names the client (a load balancer): `true` for any, or their addresses and
   * CIDR ranges. Off by default, since a header anyone can send must not decide the rate-limited address.
   */
  readonly trustProxy: boolean | readonly string[];
  readonly oauth: OAuthConfig;
  readonly accounts: AccountsConfig;
  readonly cards: CardsConfig;
  readonly money: MoneyConfig;
  readonly webhooks: WebhooksConfig;
  /** The Prometheus endpoint (src/platform/metrics.ts); undefined when EWA_METRICS_PORT is unset. */
  readonly metrics: MetricsConfig | undefined;
  /** OpenTelemetry traces (src/platform/tracing.ts); undefined unless an OTLP endpoint is set. */
  readonly tracing: TracingConfig | undefined;
}

/** Tracing is on when an OTLP endpoint is set; the exporter reads OTEL_EXPORTER_OTLP_* itself (headers included). */
export interface TracingConfig {
  readonly endpoint: string;
  readonly serviceName: string;
  /** Share of traces started here that are kept; a caller's sampled flag (traceparent) is followed as it is. */
  readonly sampleRatio: number;
}

/** How many processes `ewa serve` runs (src/cli/serve-primary.ts). */
export interface WorkersConfig {
  /** Worker processes: the cores on PostgreSQL, 1 on the embedded database (one process per data directory). */
  readonly count: number;
  /** Whether EWA_WORKERS set the count (the embedded database refuses more than 1 only when asked for it). */
  readonly explicit: boolean;
}

/**
 * The V8 flags each `ewa serve` process starts with (src/cli/heap-flags.ts). Left to itself, V8 sizes the heap for
 * the machine's memory and let a worker's young generation reach 128 MB and its old one three times its live data
 * under the reads benchmark, and optimized the embedded database's WebAssembly at a cost of about 500 MB for a
 * moment (docs/design/performance.md#memory).
 */
export interface HeapConfig {
  /** `--max-semi-space-size` in MB (the young generation is two of them); 0 leaves V8's default. */
  readonly semiSpaceMb: number;
  /** `--heap-growing-percent`: the old generation grows this much over its live data before a full collection; 0 leaves V8's default. */
  readonly growingPercent: number;
  /**
   * `--liftoff-only`: WebAssembly is compiled by V8's baseline compiler alone. The embedded database is a large
   * WebAssembly module, and optimizing it took about 500 MB for a moment after it opened, for little speed.
   */
  readonly wasmLiftoffOnly: boolean;
}

/** Where GET /metrics is served: a listener of its own, never one of the public three. */
export interface MetricsConfig {
  readonly port: number;
  readonly host: string;
}

/** Advances, their idempotency keys, the sandbox rail and the scheduled money work. */
export interface MoneyConfig {
  /** How long a POST /rest/transfers answer is kept for replay under its Idempotency-Key. */
  readonly idempotencyKeyTtlSeconds: number;
  /** A request holding a key whose process stops answering loses its transaction, and so the key, after this long. */
  readonly idempotencyLockSeconds: number;
  /** Advances that arrive together share one transaction, this many at most (group commit); 1 turns it off. */
  readonly transferBatchMax: number;
  /** Advance transactions (alone or batched) one process runs at once. */
  readonly transfersInFlightMax: number;
  /** An advance of the same amount to the same destination within this window is DUPLICATE_TRANSFER. */
  readonly duplicateTransferWindowSeconds: number;
  /** The sandbox rail settles WITHIN_THIRTY_MINUTES advances this long after submission. */
  readonly sandboxInstantSettleSeconds: number;
  /** Run scheduled work (daily accrual, settlement, payday) in this process. */
  readonly schedulerEnabled: boolean;
  readonly schedulerTickMs: number;
  /** Which rail pays bank accounts: the sandbox simulator, or ACH through Nacha files (cards stay on the sandbox). */
  readonly rail: 'sandbox' | 'ach';
  readonly outbox: OutboxConfig;
  readonly ach: AchConfig;
}

/** ACH through Nacha files: who we are in the files, and the folders the bank's file transfer reads and fills. */
export interface AchConfig {
  readonly outboundDir: string;
  readonly inboundDir: string;
  readonly immediateDestination: string;
  readonly immediateDestinationName: string;
  readonly immediateOrigin: string;
  readonly immediateOriginName: string;
  readonly companyName: string;
  readonly companyIdentification: string;
  readonly originatingDfi: string;
}

/** Webhook deliveries (src/webhooks/): how long they are retried, how long a receiver may take, where they may go. */
export interface WebhooksConfig {
  /** A delivery not accepted within this many hours of its first try is given up, and its endpoint disabled. */
  readonly retryHours: number;
  /** A receiver that has not answered within this is counted a failed attempt. */
  readonly timeoutSeconds: number;
  /** Endpoints must use https (production). */
  readonly requireHttps: boolean;
  /** Deliveries may go to loopback and private addresses (the sandbox); production refuses them (no SSRF). */
  readonly allowPrivateAddresses: boolean;
  /** Events and their delivery log are kept this many days, for redelivery. */
  readonly retentionDays: number;
  /** Endpoints one client may register. */
  readonly endpointsPerClientMax: number;
}

/** The transactional outbox and its dispatcher (src/outbox/). */
export interface OutboxConfig {
  /** How often each process looks for messages due (a commit that writes one also wakes it). */
  readonly pollMs: number;
  /** A claimed message is its process's to send for this long; a process that dies lets it go then. */
  readonly leaseSeconds: number;
  /** A rail call that takes longer is given up and retried (shorter than the lease). */
  readonly sendTimeoutSeconds: number;
  /** Retries wait 1 s, 2 s, 4 s … (with jitter) up to this. */
  readonly retryMaxSeconds: number;
}

/** A key with its id, so that keys can rotate: the first of a list is used for new data, all of them to read. */
export interface KeyEntry {
  readonly kid: string;
  readonly key: Buffer;
}

/** Card tokenization and the card vault (DESIGN §5). */
export interface CardsConfig {
  /** P-256 private keys (32-byte scalars) of card tokens: the first encrypts new tokens, every one decrypts. */
  readonly tokenKeys: readonly KeyEntry[];
  readonly tokenTtlSeconds: number;
  /** AES-256 key-encryption keys of the vault: the first seals new cards, every one opens. */
  readonly vaultKeys: readonly KeyEntry[];
  /** Card number prefixes (BINs) refused with DEBIT_CARD_CREATION_BLOCKED. */
  readonly binBlockList: readonly string[];
  /** Origins that browsers may post card data from; `*` for any. */
  readonly corsOrigins: readonly string[];
  readonly tokensPerIpPerMinute: number;
  readonly tokensPerCardPerMinute: number;
}

/** Rules for the bank accounts and cards people add. */
export interface AccountsConfig {
  /**
   * Bank accounts refused with BANK_ACCOUNT_CREATION_BLOCKED: a routing number alone blocks every account at that
   * bank; `routing:1234` blocks account numbers that start with 1234 there.
   */
  readonly bankAccountBlockList: readonly { routingNumber: string; accountPrefix?: string }[];
  /** Bank accounts and cards one person may hold at once. */
  readonly perPersonMax: number;
}

/** Lifetimes of what the authorization server issues, and how the API checks tokens. */
export interface OAuthConfig {
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  readonly authorizationCodeTtlSeconds: number;
  readonly sessionTtlSeconds: number;
  readonly interactionTtlSeconds: number;
  /** How often each API process reads new revocations: the most a revoked token can outlive its revocation. */
  readonly revocationPollMs: number;
  readonly tokenCacheMax: number;
  /**
   * Failed sign-ins of one account from one address before each further try of that account from that address
   * must wait, doubling from 30 s up to 15 minutes. Other addresses, and other accounts, are not slowed.
   */
  readonly loginFailuresBeforeBackoff: number;
  /**
   * Failed sign-ins and sign-ups from one address, whatever the account, before each further try from that
   * address must wait: higher than the per-account value, since an office or a carrier shares one address.
   */
  readonly loginFailuresPerAddressBeforeBackoff: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Public, in this file, so that anyone can run the sandbox; it encrypts nothing of value, which is why
 * production refuses it.
 */
export const DEVELOPMENT_MASTER_KEY = 'ZXdhLXNlcnZlci1kZXZlbG9wbWVudC1rZXktMzJieXQ=';

type Env = Readonly<Record<string, string | undefined>>;

/** Builds the one configuration object from the environment; the only place that reads variables. */
export function loadConfig(env: Env = process.env): Config {
  const read = new EnvReader(env);
  const runEnv = read.oneOf('EWA_ENV', ['uat', 'production'] as const, 'uat');
  const host = read.optionalHost('EWA_HOST') ?? 'localhost';
  const apiPort = read.port('EWA_API_PORT', 8080);
  const authPort = read.port('EWA_AUTH_PORT', 8081);
  const paymentsPort = read.port('EWA_PAYMENTS_PORT', 8082);
  requireOwnPorts([
    ['EWA_API_PORT', apiPort],
    ['EWA_AUTH_PORT', authPort],
    ['EWA_PAYMENTS_PORT', paymentsPort],
  ]);
  const databaseUrl = read.optionalUrl('DATABASE_URL', ['postgres:', 'postgresql:']);
  const limits: DatabaseLimits = {
    statementTimeoutMs: read.integer('EWA_DB_STATEMENT_TIMEOUT_MS', 10_000, 0, 3_600_000),
    lockTimeoutMs: read.integer('EWA_DB_LOCK_TIMEOUT_MS', 3000, 0, 3_600_000),
    idleInTransactionTimeoutMs: read.integer('EWA_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', 30_000, 0, 3_600_000),
    connectTimeoutMs: read.integer('EWA_DB_CONNECT_TIMEOUT_MS', 5000, 100, 600_000),
  };
  const heap = heapConfig(read);
  const database: DatabaseConfig = databaseUrl
    ? {
        kind: 'postgres',
        url: databaseUrl,
        poolSize: read.integer('EWA_DB_POOL_SIZE', 10, 1, 500),
        ...optional('schema', read.identifier('EWA_DB_SCHEMA')),
        limits,
      }
    : {
        kind: 'pglite',
        dataDir: dataDirOf(read.string('EWA_DATA_DIR', './data')),
        templateDir: templateDirOf(read.string('EWA_EMBEDDED_TEMPLATE_DIR', defaultTemplateDir(env))),
        shippedTemplate: read.boolean('EWA_EMBEDDED_SHIPPED_TEMPLATE', true),
        wasmLiftoffOnly: heap.wasmLiftoffOnly,
        limits,
      };
  const http: HttpLimits = {
    requestTimeoutMs: read.integer('EWA_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
    headersTimeoutMs: read.integer('EWA_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
    connectionTimeoutMs: read.integer('EWA_CONNECTION_TIMEOUT_MS', 60_000, 100, 3_600_000),
    // Longer than the 60 s idle timeout of common load balancers, so that the balancer closes idle connections
    // first and never sends a request on one this server is closing (Fastify's default).
    keepAliveTimeoutMs: read.integer('EWA_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000),
  };
  if (http.headersTimeoutMs > http.requestTimeoutMs) {
    throw new ConfigError('EWA_HEADERS_TIMEOUT_MS must not be more than EWA_REQUEST_TIMEOUT_MS.');
  }
  const keyText = read.string('EWA_MASTER_KEY', DEVELOPMENT_MASTER_KEY);
  const masterKey = Buffer.from(keyText, 'base64');
  if (masterKey.length !== 32) {
    throw new ConfigError('EWA_MASTER_KEY must be 32 bytes encoded in base64 (44 characters).');
  }
  const apiUrl = read.url('EWA_BASE_URL', `http://localhost:${apiPort}`);
  const loginFailuresBeforeBackoff = read.integer('EWA_LOGIN_FAILURES_BEFORE_BACKOFF', 5, 1, 100);
  const config: Config = {
    env: runEnv,
    host,
    api: { port: apiPort, publicUrl: apiUrl },
    auth: { port: authPort, publicUrl: read.url('EWA_AUTH_URL', `http://localhost:${authPort}`) },
    payments: {
      port: paymentsPort,
      publicUrl: read.url('EWA_PAYMENTS_URL', `http://localhost:${paymentsPort}`),
    },
    database,
    logLevel: read.oneOf(
      'EWA_LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      'info',
    ),
    masterKey,
    usesDevelopmentKey: keyText === DEVELOPMENT_MASTER_KEY,
    seedDemoData: read.boolean('EWA_SEED_DEMO', runEnv === 'uat'),
    bodyLimitBytes: read.integer('EWA_BODY_LIMIT_BYTES', 1_048_576, 1024, 104_857_600),
    healthDbTimeoutMs: read.integer('EWA_HEALTH_DB_TIMEOUT_MS', 1000, 50, 60_000),
    shutdownTimeoutMs: read.integer('EWA_SHUTDOWN_TIMEOUT_MS', 10_000, 100, 600_000),
    drainDelayMs: read.integer('EWA_DRAIN_DELAY_MS', 0, 0, 600_000),
    workerStallTimeoutMs: read.integer('EWA_WORKER_STALL_TIMEOUT_MS', 30_000, 1000, 600_000),
    workers: workersConfig(read, database),
    heap,
    redisUrl: redisUrlOf(read.optionalUrl('REDIS_URL', ['redis:', 'rediss:'])),
    http,
    loadShedding: {
      // The embedded database runs its statements in this thread, so a long one stalls the event loop by design:
      // shedding would refuse requests that only wait behind it. PostgreSQL keeps the loop free.
      eventLoopDelayMs: read.integer(
        'EWA_SHED_EVENT_LOOP_DELAY_MS',
        database.kind === 'postgres' ? 1000 : 0,
        0,
        60_000,
      ),
      sampleIntervalMs: read.integer('EWA_SHED_SAMPLE_INTERVAL_MS', 1000, 10, 60_000),
    },
    corsOrigins: read.originList('EWA_CORS_ORIGINS', runEnv === 'uat' ? ['*'] : []),
    trustProxy: read.trustProxy('EWA_TRUST_PROXY'),
    oauth: {
      accessTokenTtlSeconds: read.integer('EWA_ACCESS_TOKEN_TTL_SECONDS', 3600, 60, 86_400),
      refreshTokenTtlSeconds: read.integer('EWA_REFRESH_TOKEN_TTL_SECONDS', 30 * 86_400, 3600, 365 * 86_400),
      authorizationCodeTtlSeconds: read.integer('EWA_AUTHORIZATION_CODE_TTL_SECONDS', 60, 10, 600),
      sessionTtlSeconds: read.integer('EWA_SESSION_TTL_SECONDS', 86_400, 300, 30 * 86_400),
      interactionTtlSeconds: read.integer('EWA_INTERACTION_TTL_SECONDS', 600, 60, 3600),
      revocationPollMs: read.integer('EWA_REVOCATION_POLL_MS', 2000, 100, 5000),
      tokenCacheMax: read.integer('EWA_TOKEN_CACHE_MAX', 100_000, 100, 10_000_000),
      loginFailuresBeforeBackoff,
      loginFailuresPerAddressBeforeBackoff: read.integer(
        'EWA_LOGIN_FAILURES_PER_ADDRESS_BEFORE_BACKOFF',
        Math.max(20, loginFailuresBeforeBackoff),
        loginFailuresBeforeBackoff,
        100_000,
      ),
    },
    accounts: {
      bankAccountBlockList: read.bankAccountBlockList('EWA_BANK_ACCOUNT_BLOCK_LIST'),
      perPersonMax: read.integer('EWA_ACCOUNTS_PER_PERSON_MAX', 20, 1, 1000),
    },
    cards: {
      tokenKeys: read.keyList('EWA_CARD_TOKEN_KEYS', masterKey, 'card-token'),
      tokenTtlSeconds: read.integer('EWA_CARD_TOKEN_TTL_SECONDS', 900, 30, 86_400),
      vaultKeys: read.keyList('EWA_VAULT_KEYS', masterKey, 'vault'),
      binBlockList: read.digitList('EWA_CARD_BIN_BLOCK_LIST', 6, 8),
      corsOrigins: read.originList('EWA_CARD_CORS_ORIGINS', runEnv === 'uat' ? ['*'] : []),
      tokensPerIpPerMinute: read.integer('EWA_CARD_TOKENS_PER_IP_PER_MINUTE', 10, 1, 100_000),
      tokensPerCardPerMinute: read.integer('EWA_CARD_TOKENS_PER_CARD_PER_MINUTE', 3, 1, 100_000),
    },
    webhooks: {
      retryHours: read.integer('EWA_WEBHOOK_RETRY_HOURS', 24, 1, 168),
      timeoutSeconds: read.integer('EWA_WEBHOOK_TIMEOUT_SECONDS', 10, 1, 30),
      requireHttps: read.boolean('EWA_WEBHOOK_REQUIRE_HTTPS', runEnv === 'production'),
      // A sandbox on a laptop sends to receivers on it; a hosted one (a public EWA_BASE_URL) must not let partners
      // reach its network.
      allowPrivateAddresses: read.boolean(
        'EWA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES',
        runEnv === 'uat' && isLoopbackHost(new URL(apiUrl).hostname),
      ),
      retentionDays: read.integer('EWA_WEBHOOK_RETENTION_DAYS', 30, 1, 3650),
      endpointsPerClientMax: read.integer('EWA_WEBHOOK_ENDPOINTS_PER_CLIENT_MAX', 20, 1, 1000),
    },
    metrics: metricsConfig(read, [
      ['EWA_API_PORT', apiPort],
      ['EWA_AUTH_PORT', authPort],
      ['EWA_PAYMENTS_PORT', paymentsPort],
    ]),
    tracing: tracingConfig(read),
    money: {
      idempotencyKeyTtlSeconds: read.integer('EWA_IDEMPOTENCY_KEY_TTL_SECONDS', 86_400, 60, 30 * 86_400),
      idempotencyLockSeconds: read.integer('EWA_IDEMPOTENCY_LOCK_SECONDS', 30, 1, 3600),
      transferBatchMax: read.integer('EWA_TRANSFER_BATCH_MAX', 32, 1, 256),
      // Two: one batch at the database while the next gathers. Fewer transactions at once make larger batches, which
      // share their statements and their commit (BENCHMARKS.md, "POST /rest/transfers"). Never more than half the
      // pool, so that reads and other writes always find a connection; the embedded database has one.
      transfersInFlightMax: read.integer(
        'EWA_TRANSFERS_IN_FLIGHT_MAX',
        database.kind === 'postgres' ? Math.max(1, Math.min(2, Math.floor(database.poolSize / 2))) : 1,
        1,
        500,
      ),
      duplicateTransferWindowSeconds: read.integer('EWA_DUPLICATE_TRANSFER_WINDOW_SECONDS', 60, 0, 86_400),
      sandboxInstantSettleSeconds: read.integer('EWA_SANDBOX_INSTANT_SETTLE_SECONDS', 120, 0, 1800),
      schedulerEnabled: read.boolean('EWA_SCHEDULER', true),
      schedulerTickMs: read.integer('EWA_SCHEDULER_TICK_MS', 30_000, 100, 3_600_000),
      rail: read.oneOf('EWA_RAIL', ['sandbox', 'ach'] as const, 'sandbox'),
      outbox: {
        pollMs: read.integer('EWA_OUTBOX_POLL_MS', 1000, 10, 60_000),
        leaseSeconds: read.integer('EWA_OUTBOX_LEASE_SECONDS', 60, 5, 3600),
        sendTimeoutSeconds: read.integer('EWA_RAIL_TIMEOUT_SECONDS', 20, 1, 600),
        retryMaxSeconds: read.integer('EWA_OUTBOX_RETRY_MAX_SECONDS', 3600, 1, 86_400),
      },
      // The defaults name the sandbox's test bank; production must name its own (checkProduction).
      ach: {
        outboundDir: read.string('EWA_ACH_OUTBOUND_DIR', './data/ach/outbound'),
        inboundDir: read.string('EWA_ACH_INBOUND_DIR', './data/ach/inbound'),
        immediateDestination: read.string('EWA_ACH_IMMEDIATE_DESTINATION', UAT_ROUTING_NUMBER),
        immediateDestinationName: read.string('EWA_ACH_IMMEDIATE_DESTINATION_NAME', 'SANDBOX BANK'),
        immediateOrigin: achTenCharacters(read.string('EWA_ACH_IMMEDIATE_ORIGIN', '1000000000')),
        immediateOriginName: read.string('EWA_ACH_IMMEDIATE_ORIGIN_NAME', 'EWA SERVER'),
        companyName: read.string('EWA_ACH_COMPANY_NAME', 'EWA SERVER'),
        companyIdentification: achTenCharacters(read.string('EWA_ACH_COMPANY_ID', '1000000000')),
        originatingDfi: read.string('EWA_ACH_ODFI', '11000000'),
      },
    },
  };
  if (config.money.rail === 'ach') checkAchIdentity(config.money.ach);
  if (config.money.outbox.sendTimeoutSeconds >= config.money.outbox.leaseSeconds)
    throw new ConfigError(
      `EWA_RAIL_TIMEOUT_SECONDS (${config.money.outbox.sendTimeoutSeconds}) must be shorter than EWA_OUTBOX_LEASE_SECONDS (${config.money.outbox.leaseSeconds}), or two processes could send one payment at once.`,
    );
  checkProduction(config, env);
  return deepFreeze(config);
}

/**
 * A Nacha field of 10 characters that banks often give as a 9-digit number, which the file writes with a leading
 * space. Every setting is trimmed when read, so that space could never be given: 9 digits get it here.
 */
function achTenCharacters(value: string): string {
  return /^\d{9}$/.test(value) ? ` ${value}` : value;
}

/** The ACH identity must fit the file's fields, so that a bad setting stops the start, not the first file. */
function checkAchIdentity(ach: AchConfig): void {
  const rules: [string, string, RegExp, string][] = [
    ['EWA_ACH_IMMEDIATE_DESTINATION', ach.immediateDestination, /^\d{9}$/, 'a 9-digit routing number'],
    [
      'EWA_ACH_IMMEDIATE_ORIGIN',
      ach.immediateOrigin,
      /^[0-9A-Z ]{10}$/,
      '10 digits, capitals or spaces, as your bank gave it, or a 9-digit number (written with a leading space)',
    ],
    [
      'EWA_ACH_COMPANY_ID',
      ach.companyIdentification,
      /^[0-9A-Z ]{10}$/,
      '10 digits, capitals or spaces, as your bank gave it (often "1" and the 9-digit tax id), or a 9-digit number (written with a leading space)',
    ],
    ['EWA_ACH_ODFI', ach.originatingDfi, /^\d{8}$/, "the originating bank's 8-digit id"],
    [
      'EWA_ACH_IMMEDIATE_DESTINATION_NAME',
      ach.immediateDestinationName,
      /^[\x20-\x7e]{1,23}$/,
      'up to 23 printable ASCII characters',
    ],
    [
      'EWA_ACH_IMMEDIATE_ORIGIN_NAME',
      ach.immediateOriginName,
      /^[\x20-\x7e]{1,23}$/,
      'up to 23 printable ASCII characters',
    ],
    ['EWA_ACH_COMPANY_NAME', ach.companyName, /^[\x20-\x7e]{1,16}$/, 'up to 16 printable ASCII characters'],
  ];
  for (const [name, value, pattern, what] of rules)
    if (!pattern.test(value)) throw new ConfigError(`${name} must be ${what} (got "${value}").`);
  if (!isAbaRoutingNumber(ach.immediateDestination))
    throw new ConfigError(
      `EWA_ACH_IMMEDIATE_DESTINATION ${ach.immediateDestination} fails the routing-number checksum: check the nine digits against your bank's ACH instructions.`,
    );
}

/** EWA_WORKERS, checked against the database: the embedded one is locked by the process that opens it. */
function workersConfig(read: EnvReader, database: DatabaseConfig): WorkersConfig {
  const explicit = read.optionalInteger('EWA_WORKERS', 1, 256, 'a whole number from 1 to 256');
  if (explicit !== undefined) {
    checkWorkerCount(explicit, database, 'EWA_WORKERS');
    return { count: explicit, explicit: true };
  }
  return { count: database.kind === 'postgres' ? availableParallelism() : 1, explicit: false };
}

/** Read on its own by `ewa serve` before anything else loads, to start its process with these flags. */
export function heapConfigOf(env: Env): HeapConfig {
  return heapConfig(new EnvReader(env));
}

function heapConfig(read: EnvReader): HeapConfig {
  return {
    semiSpaceMb: read.integer('EWA_V8_SEMI_SPACE_MB', 4, 0, 1024),
    growingPercent: read.integer('EWA_V8_HEAP_GROWING_PERCENT', 20, 0, 1000),
    wasmLiftoffOnly: read.boolean('EWA_V8_WASM_LIFTOFF_ONLY', read.string('DATABASE_URL', '') === ''),
  };
}

/** More than one worker needs PostgreSQL: the embedded database's data directory belongs to one process. */
export function checkWorkerCount(count: number, database: DatabaseConfig, setting: string): void {
  if (count > 1 && database.kind === 'pglite')
    throw new ConfigError(
      `${setting}=${count} needs DATABASE_URL: the embedded database is opened by one process only, so it runs one worker.`,
    );
}

/** The three listeners each need a port of their own (0 takes any free one, so it never clashes). */
function requireOwnPorts(ports: [string, number][]): void {
  for (const [index, [name, port]] of ports.entries()) {
    const clash = ports.slice(0, index).find(([, other]) => port !== 0 && other === port);
    if (clash)
      throw new ConfigError(
        `${name} (${port}) is the port of ${clash[0]}: each listener needs a port of its own.`,
      );
  }
}

/**
 * Off unless EWA_METRICS_PORT is set. Loopback by default: the metrics name routes, jobs and queue sizes, which are
 * for the operator's scraper, not for the networks the public listeners face.
 */
function metricsConfig(read: EnvReader, publicPorts: [string, number][]): MetricsConfig | undefined {
  const port = read.optionalInteger(
    'EWA_METRICS_PORT',
    0,
    65_535,
    'a port number from 0 to 65535 (0: any free port), or unset to turn the metrics off',
  );
  const host = read.optionalHost('EWA_METRICS_HOST');
  if (port === undefined) {
    if (host !== undefined)
      throw new ConfigError(
        'EWA_METRICS_HOST is set but EWA_METRICS_PORT is not: set the port to serve metrics.',
      );
    return undefined;
  }
  const clash = publicPorts.find(([, publicPort]) => publicPort !== 0 && publicPort === port);
  if (clash)
    throw new ConfigError(
      `EWA_METRICS_PORT (${port}) is the port of ${clash[0]}: the metrics need a port of their own.`,
    );
  return { port, host: host ?? '127.0.0.1' };
}

/**
 * Off unless OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is set: the OpenTelemetry variables
 * every collector's documentation names. The general endpoint takes the signal's path (/v1/traces), as the
 * specification says; the traces endpoint is used as it is.
 */
function tracingConfig(read: EnvReader): TracingConfig | undefined {
  const protocols = ['http:', 'https:'];
  const tracesEndpoint = read.optionalUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', protocols);
  const endpoint = read.optionalUrl('OTEL_EXPORTER_OTLP_ENDPOINT', protocols);
  if (tracesEndpoint === undefined && endpoint === undefined) return undefined;
  return {
    endpoint: tracesEndpoint ?? `${endpoint}/v1/traces`,
    serviceName: read.string('OTEL_SERVICE_NAME', 'ewa-server'),
    sampleRatio: read.ratio('OTEL_TRACES_SAMPLER_ARG', 1),
  };
}

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '127.0.0.1' || host === '[::1]';
}

/** What a bank names the originator by and where files go: production must set each, the defaults are the sandbox's. */
const ACH_PRODUCTION_SETTINGS = [
  'EWA_ACH_IMMEDIATE_DESTINATION',
  'EWA_ACH_IMMEDIATE_DESTINATION_NAME',
  'EWA_ACH_IMMEDIATE_ORIGIN',
  'EWA_ACH_IMMEDIATE_ORIGIN_NAME',
  'EWA_ACH_COMPANY_NAME',
  'EWA_ACH_COMPANY_ID',
  'EWA_ACH_ODFI',
  'EWA_ACH_OUTBOUND_DIR',
  'EWA_ACH_INBOUND_DIR',
] as const;

function checkProduction(config: Config, env: Env): void {
  if (config.env !== 'production') return;
  if (config.database.kind === 'pglite') {
    throw new ConfigError(
      'EWA_ENV=production needs DATABASE_URL: the embedded database is for development only.',
    );
  }
  if (config.usesDevelopmentKey) {
    throw new ConfigError(
      'EWA_ENV=production refuses the development EWA_MASTER_KEY: set a random 32-byte key.',
    );
  }
  if (config.seedDemoData) {
    throw new ConfigError(
      'EWA_SEED_DEMO must be false when EWA_ENV=production: demo data is for the sandbox.',
    );
  }
  if (config.money.rail === 'sandbox') {
    throw new ConfigError(
      'EWA_ENV=production needs EWA_RAIL=ach: the sandbox rail moves no money and reports every payment settled.',
    );
  }
  if (!config.webhooks.requireHttps || config.webhooks.allowPrivateAddresses) {
    throw new ConfigError(
      'EWA_ENV=production sends webhooks over https to public addresses only: unset EWA_WEBHOOK_REQUIRE_HTTPS and EWA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES.',
    );
  }
  const unset = ACH_PRODUCTION_SETTINGS.filter((name) => !env[name]?.trim());
  if (config.money.rail === 'ach' && unset.length > 0) {
    throw new ConfigError(
      `EWA_RAIL=ach in production needs your bank's settings, not the sandbox's defaults: set ${unset.join(', ')} (docs/operators/configuration.md says what each is).`,
    );
  }
  if (config.money.rail === 'ach' && config.money.ach.immediateDestination === UAT_ROUTING_NUMBER) {
    throw new ConfigError(
      `EWA_RAIL=ach in production needs EWA_ACH_IMMEDIATE_DESTINATION: ${UAT_ROUTING_NUMBER} is the sandbox's test bank.`,
    );
  }
  // Tokens, passwords and card numbers cross these addresses; and the sign-in's cookies are secure in production,
  // which a browser never sends back over http, so every sign-in would fail.
  const plain = (
    [
      ['EWA_BASE_URL', config.api.publicUrl],
      ['EWA_AUTH_URL', config.auth.publicUrl],
      ['EWA_PAYMENTS_URL', config.payments.publicUrl],
    ] as const
  ).filter(([, url]) => !url.startsWith('https://'));
  if (plain.length > 0) {
    throw new ConfigError(
      `EWA_ENV=production needs https public URLs (TLS may end at a proxy in front): ${plain.map(([name, url]) => `${name} is ${url}`).join(', ')}.`,
    );
  }
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function dataDirOf(value: string): string {
  return value === ':memory:' ? value : resolve(value);
}

/** The user's cache directory (XDG), so that the template is theirs alone and outlives a checkout. */
function defaultTemplateDir(env: Env): string {
  const cacheHome = env.XDG_CACHE_HOME?.trim() || join(homedir(), '.cache');
  return join(cacheHome, 'ewa-server');
}

function templateDirOf(value: string): string | undefined {
  return value === 'off' ? undefined : resolve(value);
}

class EnvReader {
  readonly #env: Env;
  constructor(env: Env) {
    this.#env = env;
  }

  #raw(name: string): string | undefined {
    const value = this.#env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string): string {
    return this.#raw(name) ?? fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.#raw(name);
    if (value === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(value)) {
      throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got "${value}").`);
    }
    return value as T;
  }

  /** A number from 0 to 1. */
  ratio(name: string, fallback: number): number {
    const value = this.#raw(name);
    if (value === undefined) return fallback;
    const parsed = /^(0|1|0?\.\d+|1\.0*)$/.test(value) ? Number(value) : Number.NaN;
    if (Number.isNaN(parsed)) throw new ConfigError(`${name} must be a number from 0 to 1 (got "${value}").`);
    return parsed;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const value = this.#raw(name);
    if (value === undefined) return fallback;
    const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
      throw new ConfigError(`${name} must be a whole number from ${min} to ${max} (got "${value}").`);
    }
    return parsed;
  }

  /** A whole number, or undefined when unset; `what` says what it must be when it is not. */
  optionalInteger(name: string, min: number, max: number, what: string): number | undefined {
    const value = this.#raw(name);
    if (value === undefined) return undefined;
    const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
      throw new ConfigError(`${name} must be ${what} (got "${value}").`);
    }
    return parsed;
  }

  /** An IP address or a host name to listen on, or undefined when unset. */
  optionalHost(name: string): string | undefined {
    const value = this.#raw(name);
    if (value === undefined) return undefined;
    if (
      isIP(value) === 0 &&
      !/^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(
        value,
      )
    ) {
      throw new ConfigError(
        `${name} must be an IP address or a host name to listen on, like 127.0.0.1 or 0.0.0.0 (got "${value}").`,
      );
    }
    return value;
  }

  port(name: string, fallback: number): number {
    return this.integer(name, fallback, 0, 65_535);
  }

  identifier(name: string): string | undefined {
    const value = this.#raw(name);
    if (value !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(value)) {
      throw new ConfigError(
        `${name} must be a lower-case SQL identifier: letters, digits and _ (got "${value}").`,
      );
    }
    return value;
  }

  boolean(name: string, fallback: boolean): boolean {
    const value = this.#raw(name);
    if (value === undefined) return fallback;
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    throw new ConfigError(`${name} must be true or false (got "${value}").`);
  }

  bankAccountBlockList(name: string): { routingNumber: string; accountPrefix?: string }[] {
    const value = this.#raw(name);
    if (value === undefined) return [];
    return value
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean)
      .map((entry) => {
        const match = /^(\d{9})(?::(\d{1,17}))?$/.exec(entry);
        if (!match) {
          throw new ConfigError(
            `${name} entries are a 9-digit routing number, optionally with :ACCOUNT_PREFIX (got "${entry}").`,
          );
        }
        return { routingNumber: match[1]!, ...optional('accountPrefix', match[2]) };
      });
  }

  /**
   * `kid:base64,kid:base64` of 32-byte keys, the first one current. Unset, one key is derived from the master key
   * for this purpose (kid `m1`), so that a sandbox needs no setup and production needs only EWA_MASTER_KEY.
   */
  keyList(name: string, masterKey: Buffer, purpose: string): KeyEntry[] {
    const value = this.#raw(name);
    if (value === undefined) {
      return [
        { kid: 'm1', key: Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), `ewa/${purpose}`, 32)) },
      ];
    }
    const entries = value.split(',').map((entry) => {
      const match = /^([A-Za-z0-9_-]{1,32}):([A-Za-z0-9+/_-]{43}=?)$/.exec(entry.trim());
      const key = match ? Buffer.from(match[2]!.replace(/-/g, '+').replace(/_/g, '/'), 'base64') : undefined;
      if (!match || key?.length !== 32) {
        throw new ConfigError(
          `${name} entries are KID:KEY with KEY 32 random bytes in base64 (openssl rand -base64 32); got "${entry.trim().split(':')[0]}:…".`,
        );
      }
      return { kid: match[1]!, key };
    });
    if (new Set(entries.map((entry) => entry.kid)).size !== entries.length) {
      throw new ConfigError(`${name} names a key id twice.`);
    }
    return entries;
  }

  trustProxy(name: string): boolean | string[] {
    const value = this.#raw(name);
    if (value === undefined || value === 'false') return false;
    if (value === 'true') return true;
    return value.split(',').map((entry) => {
      const [address = '', bits] = entry.trim().split('/');
      const maxBits = isIP(address) === 4 ? 32 : isIP(address) === 6 ? 128 : 0;
      if (maxBits === 0 || (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= maxBits))) {
        throw new ConfigError(
          `${name} is true, false, or addresses and CIDR ranges of proxies (got "${entry.trim()}").`,
        );
      }
      return entry.trim();
    });
  }

  digitList(name: string, minLength: number, maxLength: number): string[] {
    const value = this.#raw(name);
    if (value === undefined) return [];
    return value.split(',').map((entry) => {
      const digits = entry.trim();
      if (!new RegExp(`^\\d{${minLength},${maxLength}}$`).test(digits)) {
        throw new ConfigError(`${name} entries are ${minLength} to ${maxLength} digits (got "${digits}").`);
      }
      return digits;
    });
  }

  originList(name: string, fallback: string[]): string[] {
    const value = this.#raw(name);
    if (value === undefined) return fallback;
    return value.split(',').map((entry) => {
      const origin = entry.trim();
      if (origin === '*') return origin;
      let parsed: URL | undefined;
      try {
        parsed = new URL(origin);
      } catch {}
      if (!parsed || parsed.origin !== origin) {
        throw new ConfigError(
          `${name} entries are origins like https://app.example.com, or * (got "${origin}").`,
        );
      }
      return origin;
    });
  }

  url(name: string, fallback: string): string {
    return this.optionalUrl(name, ['http:', 'https:']) ?? fallback;
  }

  optionalUrl(name: string, protocols: readonly string[]): string | undefined {
    const value = this.#raw(name);
    if (value === undefined) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      // Not echoed: a database URL may hold a password.
      const scheme = protocols.find((protocol) => value.toLowerCase().startsWith(protocol));
      throw new ConfigError(
        scheme
          ? `${name} starts with ${scheme} but is not a URL that can be read: check the host, that the port is a ` +
              'number, and that characters such as @ : / # ? % in the user name or password are percent-encoded.'
          : `${name} must be an absolute URL starting with ${protocols.map((protocol) => `${protocol}//`).join(' or ')}.`,
      );
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new ConfigError(
        `${name} must be an absolute URL starting with ${protocols.map((protocol) => `${protocol}//`).join(' or ')}.`,
      );
    }
    // Public URLs are joined with paths; a trailing slash would double it.
    return protocols.includes('http:') ? value.replace(/\/+$/, '') : value;
  }
}

/**
 * A Redis URL the client can use as it is: a host, and a database that is a number. ioredis would take
 * `redis://` as localhost, and select database `NaN` (an error thrown outside any request) from `/abc`.
 */
function redisUrlOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const { hostname, pathname } = new URL(value);
  if (hostname === '') throw new ConfigError('REDIS_URL names no host: redis://HOST[:PORT][/DATABASE].');
  if (!/^\/?(\d{1,5})?$/.test(pathname))
    throw new ConfigError(
      `REDIS_URL's database must be a number, like redis://${hostname}/0 (got "${pathname.slice(1, 41)}").`,
    );
  return value;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
