import { isDatabaseUnavailable } from '../db/database-unavailable.ts';
import { NOT_BLANK_PATTERN } from '../domain/input-text.ts';
import { AppError } from './app-error.ts';
import type { ErrorCode } from './catalog.ts';
import { serviceUnavailable } from './service-unavailable.ts';

/** The Ajv error fields Fastify passes on in `error.validation`. */
interface SchemaIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

interface FrameworkError extends Error {
  code?: string;
  statusCode?: number;
  validation?: SchemaIssue[];
  validationContext?: string;
}

export interface SchemaErrorCodes {
  /** Code for a required body field that is absent. */
  missing?: ErrorCode;
  /** Code for a body field that is present but wrong (a member the body does not define is INVALID_PARAMETERS). */
  invalid?: ErrorCode;
}

/**
 * Turns anything a request can throw into an AppError. A database that is unavailable for now (no connection in
 * time, a statement or lock timeout, a lost session) is 503 SERVICE_UNAVAILABLE with Retry-After. Unknown errors
 * become UNEXPECTED_ERROR, whose text says nothing of the cause; the caller logs the original.
 */
export function toAppError(error: unknown, codes: SchemaErrorCodes = {}): AppError {
  if (error instanceof AppError) return error;
  if (isDatabaseUnavailable(error)) {
    return serviceUnavailable(
      'The database is busy or unreachable, so nothing was done; retry after Retry-After seconds.',
      error,
    );
  }
  const err = error as FrameworkError;
  if (Array.isArray(err?.validation) && err.validation.length > 0) {
    return fromSchemaIssue(firstIssue(err.validation), err.validationContext ?? 'body', codes);
  }
  switch (err?.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', { source: { header: 'Content-Type' } });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return emptyBodyError();
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('INVALID_USER_INPUT', {
        detail: 'The request body is not valid JSON.',
        source: { pointer: '' },
      });
  }
  if (err instanceof SyntaxError && err.statusCode === 400) {
    return new AppError('INVALID_USER_INPUT', {
      detail: 'The request body is not valid JSON.',
      source: { pointer: '' },
    });
  }
  if (err?.statusCode === 429) return new AppError('TOO_MANY_REQUESTS');
  if (err?.statusCode === 413) return new AppError('PAYLOAD_TOO_LARGE');
  if (err?.statusCode === 415)
    return new AppError('UNSUPPORTED_MEDIA_TYPE', { source: { header: 'Content-Type' } });
  if (typeof err?.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    return new AppError('INVALID_USER_INPUT', { detail: 'The request could not be read.' });
  }
  return new AppError('UNEXPECTED_ERROR', { cause: error });
}

/**
 * The issue a request is answered with: the first. A union of constants (an enumeration in the OpenAPI document)
 * fails once per constant, the first alone naming one value the field may take: those are one issue, naming all.
 */
function firstIssue(issues: SchemaIssue[]): SchemaIssue {
  const first = issues[0]!;
  if (first.keyword !== 'const') return first;
  const constants = issues.filter(
    (issue) => issue.keyword === 'const' && issue.instancePath === first.instancePath,
  );
  if (constants.length < 2) return first;
  return {
    ...first,
    keyword: 'enum',
    params: { allowedValues: constants.map((issue) => issue.params.allowedValue) },
  };
}

function fromSchemaIssue(issue: SchemaIssue, context: string, codes: SchemaErrorCodes): AppError {
  const path = issue.instancePath;
  const missing = issue.keyword === 'required' ? String(issue.params.missingProperty ?? '') : undefined;
  const extra =
    issue.keyword === 'additionalProperties' ? String(issue.params.additionalProperty ?? '') : undefined;
  const field = `${path}${missing !== undefined ? `/${missing}` : ''}${extra !== undefined ? `/${extra}` : ''}`;
  const reason = explain(issue, missing, extra);
  if (context === 'body') {
    // A member the operation does not define is INVALID_PARAMETERS on every route, whatever codes it names.
    const code =
      extra !== undefined
        ? 'INVALID_PARAMETERS'
        : missing !== undefined
          ? (codes.missing ?? 'INVALID_PARAMETERS')
          : (codes.invalid ?? 'INVALID_PARAMETERS');
    return new AppError(code, { detail: `${field || 'The body'} ${reason}`, source: { pointer: field } });
  }
  const name = decodePointer(field.replace(/^\//, '').split('/')[0] ?? '');
  if (context === 'headers') {
    return new AppError('INVALID_PARAMETERS', {
      detail: `Header ${name} ${reason}`,
      source: { header: name },
    });
  }
  return new AppError('INVALID_PARAMETERS', {
    detail: `Parameter ${name} ${reason}`,
    source: { parameter: name },
  });
}

function explain(issue: SchemaIssue, missing: string | undefined, extra: string | undefined): string {
  if (missing !== undefined) return 'is required.';
  if (extra !== undefined) return 'is not a known field.';
  if (issue.keyword === 'enum') {
    const allowed = (issue.params.allowedValues as unknown[] | undefined)?.join(', ');
    return allowed ? `must be one of ${allowed}.` : 'has a value that is not allowed.';
  }
  if (issue.keyword === 'const') return `must be ${JSON.stringify(issue.params.allowedValue)}.`;
  // A digits-only pattern is how query parameters (text) ask for a whole number: said so, not as the pattern.
  const digits = issue.keyword === 'pattern' && /^\^\[0-9\]\{1,(\d+)\}\$$/.exec(String(issue.params.pattern));
  if (digits) return `must be a whole number of at most ${digits[1]} digits.`;
  if (issue.keyword === 'pattern' && issue.params.pattern === NOT_BLANK_PATTERN) return 'must not be blank.';
  return `${issue.message ?? 'is invalid'}.`;
}

function decodePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** A request whose operation takes a body, sent without one (or with an empty one). */
export function emptyBodyError(mediaType?: string): AppError {
  const what =
    mediaType === undefined || mediaType.includes('json') ? 'a JSON document' : `it as ${mediaType}`;
  return new AppError('INVALID_USER_INPUT', {
    detail: `The request body is empty; send ${what}.`,
    source: { pointer: '' },
  });
}
