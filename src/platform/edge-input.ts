import type { FastifyRequest } from 'fastify';
import { findTextProblem, shownText } from '../domain/input-text.ts';
import { AppError } from '../errors/app-error.ts';
import type { ErrorCode } from '../errors/catalog.ts';

const decodePointer = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~');

/** A part of a query string decoded as the rule asks (`+` a space, %XX bytes of UTF-8); undefined when it is not. */
function strictlyDecoded(part: string): string | undefined {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/**
 * The first parameter of the request's query string whose name or value is not valid percent-encoding of UTF-8
 * (`%zz`, a truncated sequence, an encoded surrogate, a byte UTF-8 never has). The query parser keeps such a part
 * as it was sent, so that it would otherwise reach the route as text the client did not mean; the path is refused
 * by the router instead (framework-errors.ts). A name that cannot be decoded is named as sent.
 */
function queryEncodingError(url: string): AppError | undefined {
  const start = url.indexOf('?');
  if (start < 0 || !url.includes('%', start)) return undefined;
  for (const pair of url.slice(start + 1).split('&')) {
    const equals = pair.indexOf('=');
    const sentName = equals < 0 ? pair : pair.slice(0, equals);
    const name = strictlyDecoded(sentName);
    const valid = name !== undefined && (equals < 0 || strictlyDecoded(pair.slice(equals + 1)) !== undefined);
    if (valid) continue;
    const shown = shownText(name ?? sentName);
    return new AppError('INVALID_PARAMETERS', {
      detail:
        `${name === undefined ? 'The name of parameter' : 'Parameter'} ${shown} is not valid percent-encoding ` +
        'of UTF-8 (%XX bytes of well-formed Unicode).',
      source: { parameter: shown },
    });
  }
  return undefined;
}

/**
 * The edge check of every string a request brings, by the one rule of input-text.ts: path ids, then the query
 * (names and values), then a parsed JSON body (keys and values). Run once per request, after the body is parsed
 * and before the route validates it, so that no store, service or error detail ever sees a NUL, a control, a
 * bidirectional or a zero-width character. A parameter names its source in `source.parameter`; a body member in
 * `source.pointer`, with `bodyCode` (the code the route gives a malformed field). Text bodies (CSV uploads) are
 * read by their own parser and are left to it. The query string is first checked as sent: valid percent-encoding
 * of UTF-8.
 */
export function inputTextError(
  request: FastifyRequest,
  bodyCode: ErrorCode = 'INVALID_PARAMETERS',
): AppError | undefined {
  const encoding = queryEncodingError(request.url);
  if (encoding) return encoding;
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
