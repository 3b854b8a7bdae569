/**
 * The database could not serve a statement for a reason that is not the statement's: no connection could be had
 * in time (the server is down or unreachable, or every connection of the pool stayed in use), or the session was
 * lost. Raised by the pool adapters (prepared-pool.ts, pglite-pool.ts) around getting a connection.
 */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
}

/**
 * SQLSTATEs that say "not now" rather than "not this": a statement or lock timeout (57014 query_canceled, 55P03
 * lock_not_available), a session ended by the server (25P03 idle in transaction, 57P01-57P05 shutdown, restart,
 * idle session), too many connections (53300), and conflicts that survived their retries (40001 serialization
 * failure, 40P01 deadlock). Class 08 (connection exceptions) counts as a whole.
 */
const RETRY_LATER_STATES = new Set([
  '57014',
  '55P03',
  '25P03',
  '57P01',
  '57P02',
  '57P03',
  '57P04',
  '57P05',
  '53300',
  '40001',
  '40P01',
]);

/** Errors of the socket to PostgreSQL (node's system error codes). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** node-postgres reports a connection lost during a query without a code, in these words. */
const LOST_CONNECTION = /^(Connection terminated|Client has encountered a connection error)/;

/**
 * True when a failure means the database is unavailable for now, so that the request answers 503 with Retry-After
 * (to-app-error.ts) rather than 500: retrying later can succeed, and nothing was written.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  const { code, message, statusCode } = (error ?? {}) as {
    code?: unknown;
    message?: unknown;
    statusCode?: unknown;
  };
  // The request's own socket: Fastify's body reader marks a client that closed its connection mid-body (ECONNRESET,
  // "aborted") with a 400. No statement failed.
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) return false;
  if (typeof code === 'string') {
    if (RETRY_LATER_STATES.has(code) || /^08[0-9A-Z]{3}$/.test(code) || NETWORK_CODES.has(code)) return true;
  }
  return typeof message === 'string' && LOST_CONNECTION.test(message);
}

/**
 * True when no connection could be had or the session was lost (the server unreachable, restarting, or silent past
 * the answer deadline): unlike a conflict or a timeout of one statement, running the same work again at once meets
 * the same wall, and only adds another wait for a connection to the time the request takes to answer.
 */
export function isConnectionLost(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (
    typeof code === 'string' &&
    (/^08[0-9A-Z]{3}$/.test(code) || NETWORK_CODES.has(code) || SHUTDOWN_STATES.has(code))
  )
    return true;
  return typeof message === 'string' && LOST_CONNECTION.test(message);
}

/** The server ended the session: admin shutdown, crash shutdown, cannot connect now (a restart). */
const SHUTDOWN_STATES = new Set(['57P01', '57P02', '57P03']);
