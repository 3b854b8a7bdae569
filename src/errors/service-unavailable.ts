import { AppError } from './app-error.ts';

/**
 * Seconds a client is told to wait before it retries a 503: about what a held lock, a pool that is all in use or a
 * restarting database takes to clear, and long enough that retries do not add to an overload.
 */
export const RETRY_AFTER_SECONDS = 5;

/** 503 SERVICE_UNAVAILABLE with Retry-After: nothing was done, and the same request can succeed later. */
export function serviceUnavailable(detail?: string, cause?: unknown): AppError {
  return new AppError('SERVICE_UNAVAILABLE', {
    ...(detail === undefined ? {} : { detail }),
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    ...(cause === undefined ? {} : { cause }),
  });
}
