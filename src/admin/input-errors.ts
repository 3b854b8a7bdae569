import { AppError, type ErrorSource } from '../errors/app-error.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import { InputError, InputRefusedError } from '../errors/input-error.ts';

/**
 * Runs an operator service for a route and turns its InputError, which names a field as the services know it
 * (`access_rate_bp`), into the 400 of the API pointing where that field is in the request: INVALID_PARAMETERS, or
 * `malformedMemberCode` for a body member the route's schema answers with another code (INVALID_FIELDS).
 */
export async function pointingAt<T>(
  sourceOf: (field: string | undefined) => ErrorSource,
  work: () => Promise<T>,
  malformedMemberCode: ErrorCode = 'INVALID_PARAMETERS',
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
    // A body member the service finds malformed is answered as the route's schema answers one; a refusal by the
    // records (InputRefusedError) or a query parameter stays INVALID_PARAMETERS.
    const malformedMember = 'pointer' in source && !(error instanceof InputRefusedError);
    throw new AppError(malformedMember ? malformedMemberCode : 'INVALID_PARAMETERS', { detail, source });
  }
}
