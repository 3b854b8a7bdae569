import type { SchemaErrorCodes } from '../errors/to-app-error.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The media type the route reads and writes; JSON:API unless it says otherwise (health: application/json). */
    mediaType?: string;
    /** Codes for body schema failures where the operation names its own (accounts: MISSING_REQUIRED_FIELD). */
    schemaErrorCodes?: SchemaErrorCodes;
    /** False for routes outside JSON:API content negotiation (the HTML reference page and its assets). */
    negotiate?: boolean;
  }
}
