import type { AppError, ErrorSource } from './app-error.ts';
import type { ErrorCode } from './catalog.ts';

/** One JSON:API error object, in the shape of the published description's `Error`. */
export interface ErrorObject {
  status: string;
  code: ErrorCode;
  detail: string;
  links: { about: string };
  source?: ErrorSource;
  meta: { request_id: string; trace_id?: string };
}

export interface ErrorDocument {
  errors: ErrorObject[];
}

export function errorDocument(
  error: AppError,
  context: { requestId: string; traceId?: string | undefined; baseUrl: string },
): ErrorDocument {
  const object: ErrorObject = {
    status: String(error.status),
    code: error.code,
    detail: error.detail,
    links: { about: `${context.baseUrl}/rest/errors#${error.code}` },
    meta: { request_id: context.requestId },
  };
  if (error.source) object.source = error.source;
  if (context.traceId) object.meta.trace_id = context.traceId;
  return { errors: [object] };
}
