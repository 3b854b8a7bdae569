import type { SchemaErrorCodes } from '../errors/to-app-error.ts';
import type { QueryNames } from './query-names.ts';

/**
 * The mark on a route's schema of an operation whose body may be left out (its route fills in the default): the
 * OpenAPI document shows that body as optional (openapi.ts), and no body is not refused as empty (json-api.ts).
 */
export const OPTIONAL_BODY = 'x-body-optional';

/**
 * The mark on a route's schema naming the headers its handler requires and checks itself, to answer its own error
 * (POST /rest/transfers: INVALID_IDEMPOTENCY_KEY) rather than a schema failure: the schema leaves them optional
 * for validation, and the OpenAPI document shows them required (openapi.ts; the mark itself is not published).
 */
export const HANDLER_REQUIRED_HEADERS = 'x-headers-required';

/** One way to be allowed: a token of this kind carrying all of these scopes (OpenAPI security semantics). */
export interface SecurityRequirement {
  kind: 'user' | 'client';
  scopes: string[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route; any one requirement is enough. Every /rest and /admin route has it or `public`. */
    security?: SecurityRequirement[];
    /** A /rest route anyone may call without a token (the error catalog page, the OpenAPI document). */
    public?: boolean;
    /** The media type the route reads and writes; JSON:API unless it says otherwise (health: application/json). */
    mediaType?: string;
    /** The media type of the request body when it is not `mediaType` (a roster upload is text/csv). */
    requestMediaType?: string;
    /** Codes for body schema failures where the operation names its own (accounts: MISSING_REQUIRED_FIELD). */
    schemaErrorCodes?: SchemaErrorCodes;
    /** False for routes outside JSON:API content negotiation (the HTML reference page and its assets). */
    negotiate?: boolean;
    /** The query parameters the route's schema names (json-api.ts): any other is refused. */
    queryNames?: QueryNames;
  }
}
