import { ERROR_CATALOG, type ErrorCode } from './catalog.ts';

/** Where in the request the problem is: exactly one of a JSON pointer, a query parameter or a header. */
export type ErrorSource = { pointer: string } | { parameter: string } | { header: string };

export interface AppErrorOptions {
  detail?: string;
  source?: ErrorSource;
  headers?: Record<string, string>;
  cause?: unknown;
}

/** An expected failure with a catalog code. Its status lives in the catalog, never at the throw site. */
export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  readonly detail: string;
  readonly source: ErrorSource | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    const detail = options.detail ?? ERROR_CATALOG[code].detail;
    super(`${code}: ${detail}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.detail = detail;
    this.source = options.source;
    this.headers = options.headers;
  }

  get status(): number {
    return ERROR_CATALOG[this.code].status;
  }
}
