import { AppError, type ErrorSource } from '../errors/app-error.ts';
import { InputError } from '../errors/input-error.ts';

/**
 * Runs an operator service for a route and turns its InputError, which names a field as the services know it
 * (`access_rate_bp`), into the 400 INVALID_PARAMETERS of the API pointing where that field is in the request.
 */
export async function pointingAt<T>(
  sourceOf: (field: string | undefined) => ErrorSource,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    const source = sourceOf(error.field);
    // A service names its own field (`limit`); the detail names it as the request did (`page[limit]`).
    const named = error.field !== undefined && 'parameter' in source && source.parameter !== error.field;
    const detail =
      named && error.message.startsWith(`${error.field} `)
        ? `${source.parameter}${error.message.slice(error.field!.length)}`
        : error.message;
    throw new AppError('INVALID_PARAMETERS', { detail, source });
  }
}
