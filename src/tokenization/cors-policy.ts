/** How long a browser may reuse a preflight answer; Chromium caps it at two hours, ten minutes keeps changes quick. */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * Which web origins may post card data straight from a browser (DESIGN §1: card data should never pass through the
 * partner's server). Only POST with a JSON body is allowed, never credentials: the endpoint needs no cookie or
 * token, so there is nothing for a hostile page to ride on. An origin not on the list gets no CORS headers, and the
 * browser keeps the response from the page.
 */
export class CorsPolicy {
  readonly #anyOrigin: boolean;
  readonly #origins: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.#anyOrigin = origins.includes('*');
    this.#origins = new Set(origins);
  }

  /** Headers for an actual request (and its error responses, so that the page can read what to fix). */
  responseHeaders(origin: string | undefined): Record<string, string> {
    const allowOrigin = this.#allowOrigin(origin);
    const vary = this.#vary();
    if (!allowOrigin) return vary;
    return {
      ...vary,
      'Access-Control-Allow-Origin': allowOrigin,
      // A page must be able to read how long to wait after a 429, and quote the request id to support.
      'Access-Control-Expose-Headers': 'Retry-After, X-Request-Id',
    };
  }

  /** Headers for a preflight OPTIONS request; none at all unless the origin is allowed and the method is POST. */
  preflightHeaders(origin: string | undefined, requestMethod: string | undefined): Record<string, string> {
    const vary = this.#vary();
    const allowOrigin = this.#allowOrigin(origin);
    if (!allowOrigin || requestMethod !== 'POST') return vary;
    return {
      ...vary,
      'Access-Control-Allow-Origin': allowOrigin,
      'Access-Control-Allow-Methods': 'POST',
      'Access-Control-Allow-Headers': 'Content-Type',
      'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
    };
  }

  /** With a list of origins the answer depends on Origin, and a shared cache must know it. */
  #vary(): Record<string, string> {
    return this.#anyOrigin ? {} : { Vary: 'Origin' };
  }

  #allowOrigin(origin: string | undefined): string | undefined {
    if (origin === undefined) return undefined;
    if (this.#anyOrigin) return '*';
    return this.#origins.has(origin) ? origin : undefined;
  }
}
