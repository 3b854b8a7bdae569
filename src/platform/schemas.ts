import { Type } from 'typebox';
import { ERROR_CATALOG, type ErrorCode } from '../errors/catalog.ts';

/**
 * The JSON:API error document every failing operation answers with; one per status in the OpenAPI document, listing
 * the codes of that status, or the `codes` given for a status whose codes belong each to its own operations.
 */
export function errorDocumentSchema(status: number, description: string, codes?: readonly ErrorCode[]) {
  codes ??= (Object.keys(ERROR_CATALOG) as ErrorCode[]).filter(
    (code) => ERROR_CATALOG[code].status === status,
  );
  return Type.Object(
    {
      errors: Type.Array(
        Type.Object({
          status: Type.String({ examples: [String(status)] }),
          code: Type.String({ description: `One of: ${codes.join(', ')}.` }),
          detail: Type.String(),
          links: Type.Object({ about: Type.Optional(Type.String({ format: 'uri' })) }),
          source: Type.Optional(
            Type.Object({
              pointer: Type.Optional(Type.String()),
              parameter: Type.Optional(Type.String()),
              header: Type.Optional(Type.String()),
            }),
          ),
          meta: Type.Object({
            request_id: Type.Optional(Type.String()),
            trace_id: Type.Optional(Type.String()),
          }),
        }),
      ),
    },
    { description },
  );
}

export const ErrorResponses = {
  400: errorDocumentSchema(400, 'Bad request: the code and source name what to fix.'),
  401: errorDocumentSchema(401, 'Missing or invalid access token.'),
  403: errorDocumentSchema(403, 'The token does not allow this operation.'),
  404: errorDocumentSchema(404, 'No such record visible to the caller.'),
  406: errorDocumentSchema(406, 'The Accept header excludes the media type of this operation.'),
  409: errorDocumentSchema(409, 'A request with the same idempotency key is in flight.', [
    'IDEMPOTENCY_KEY_LOCKED',
  ]),
  415: errorDocumentSchema(415, 'The request body is not in the media type this operation reads.'),
  429: errorDocumentSchema(429, 'Rate limited.'),
  500: errorDocumentSchema(500, 'Unexpected error.'),
  503: errorDocumentSchema(
    503,
    'Overloaded, or the database is busy or unreachable: nothing was done; retry after Retry-After seconds.',
  ),
};

/**
 * Picks the error responses an operation can give, for its schema and so for the OpenAPI document. Every operation
 * can answer 503 (load shedding, the database busy or unreachable), so it is always there.
 */
export function errorResponses<S extends keyof typeof ErrorResponses>(...statuses: S[]) {
  return Object.fromEntries(
    [...statuses, 503 as const].map((status) => [status, ErrorResponses[status]]),
  ) as Pick<typeof ErrorResponses, S | 503>;
}
