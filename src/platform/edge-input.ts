import type { FastifyRequest } from 'fastify';
import { findTextProblem, shownText } from '../domain/input-text.ts';
import { AppError } from '../errors/app-error.ts';
import type { ErrorCode } from '../errors/catalog.ts';

const decodePointer = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~');

/**
 * The edge check of every string a request brings, by the one rule of input-text.ts: path ids, then the query
 * (names and values), then a parsed JSON body (keys and values). Run once per request, after the body is parsed
 * and before the route validates it, so that no store, service or error detail ever sees a NUL, a control, a
 * bidirectional or a zero-width character. A parameter names its source in `source.parameter`; a body member in
 * `source.pointer`, with `bodyCode` (the code the route gives a malformed field). Text bodies (CSV uploads) are
 * read by their own parser and are left to it.
 */
export function inputTextError(
  request: FastifyRequest,
  bodyCode: ErrorCode = 'INVALID_PARAMETERS',
): AppError | undefined {
  for (const parameters of [request.params, request.query]) {
    const finding = findTextProblem(parameters);
    if (!finding) continue;
    const name = shownText(decodePointer(finding.pointer.split('/')[1] ?? ''));
    return new AppError('INVALID_PARAMETERS', {
      detail: `${finding.key ? 'The name of parameter' : 'Parameter'} ${name} ${finding.problem}`,
      source: { parameter: name },
    });
  }
  if (typeof request.body !== 'object' || request.body === null) return undefined;
  const finding = findTextProblem(request.body);
  if (!finding) return undefined;
  const pointer = shownText(finding.pointer);
  const where = finding.pointer === '' ? 'The body' : finding.key ? `The member name at ${pointer}` : pointer;
  return new AppError(bodyCode, { detail: `${where} ${finding.problem}`, source: { pointer } });
}
