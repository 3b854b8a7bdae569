import type { FastifyBaseLogger } from 'fastify';
import type { AppError } from '../errors/app-error.ts';

/**
 * How a 5xx answer is logged. A 503 (the database busy or away, the process overloaded) is expected while it lasts
 * and every request meets it: a warning with its reason, not an error with a stack for each, so that error lines
 * (what production.md says to alert on) stay the unexpected ones.
 */
export function logServerFailure(
  log: FastifyBaseLogger,
  answer: AppError,
  error: unknown,
  message: string,
): void {
  if (answer.status < 500) return;
  if (answer.code === 'SERVICE_UNAVAILABLE') log.warn({ reason: (error as Error)?.message }, message);
  else log.error({ err: error }, message);
}
