import assert from 'node:assert/strict';

export interface ErrorSource {
  pointer?: string;
  parameter?: string;
  header?: string;
}

interface AnswerLike {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/**
 * Fails unless an answer is one error document of the listener's shape: the status, the media type, one error with
 * status, code, detail, links.about and meta.request_id equal to the X-Request-Id header; `Cache-Control: no-store`
 * (the REST and card listeners say so of every answer); and the source, if given. Returns the error object.
 */
export function assertErrorAnswer(
  answer: AnswerLike,
  status: number,
  code: string,
  options: { source?: ErrorSource; mediaType?: string } = {},
): { detail: string; source?: ErrorSource; meta: { request_id: string } } {
  const context = `${answer.statusCode} ${answer.body.slice(0, 400)}`;
  assert.equal(answer.statusCode, status, context);
  assert.equal(
    String(answer.headers['content-type']).split(';')[0],
    options.mediaType ?? 'application/vnd.api+json',
    context,
  );
  assert.equal(answer.headers['cache-control'], 'no-store', `no Cache-Control: no-store: ${context}`);
  const requestId = answer.headers['x-request-id'];
  assert.ok(typeof requestId === 'string' && requestId.length > 0, `no X-Request-Id: ${context}`);
  const document = JSON.parse(answer.body) as { errors: Record<string, unknown>[] };
  assert.equal(document.errors.length, 1, context);
  const error = document.errors[0] as {
    status: string;
    code: string;
    detail: string;
    links: { about: string };
    source?: ErrorSource;
    meta: { request_id: string };
  };
  assert.equal(error.status, String(status), context);
  assert.equal(error.code, code, context);
  assert.ok(typeof error.detail === 'string' && error.detail.length > 0, context);
  assert.match(error.links.about, new RegExp(`/rest/errors#${code}$`), context);
  assert.equal(error.meta.request_id, requestId, context);
  if (options.source) assert.deepEqual(error.source, options.source, context);
  return error;
}
