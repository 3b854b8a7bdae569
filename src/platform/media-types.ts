/** Content negotiation of JSON:API (https://jsonapi.org/format/#content-negotiation), as pure functions. */
export const JSON_API_MEDIA = 'application/vnd.api+json';
export const JSON_MEDIA = 'application/json';

interface MediaRange {
  type: string;
  params: Map<string, string>;
  quality: number;
}

function parseMediaRange(text: string): MediaRange {
  const [type = '', ...parts] = text.split(';');
  const params = new Map<string, string>();
  let quality = 1;
  for (const part of parts) {
    const [key = '', value = ''] = part.split('=').map((piece) => piece.trim());
    const name = key.toLowerCase();
    if (name === 'q') quality = Number.isFinite(Number(value)) ? Number(value) : 0;
    else if (name) params.set(name, value.replace(/^"|"$/g, ''));
  }
  return { type: type.trim().toLowerCase(), params, quality };
}

/**
 * Whether a parameter of the JSON:API media type is one a server must take (JSON:API 1.1): `profile`, whose
 * profiles a server may ignore, and this server does; `ext` naming no extension, as this server applies none. Any
 * other, or an `ext` naming one, is refused (415 on Content-Type, not acceptable on Accept).
 */
function isTakenJsonApiParameter(name: string, value: string): boolean {
  return name === 'profile' || (name === 'ext' && value.trim() === '');
}

const takesJsonApiParameters = (range: MediaRange) =>
  [...range.params].every(([name, value]) => isTakenJsonApiParameter(name, value));

/**
 * True when an Accept header allows `produced`. JSON:API ranges with a parameter other than `profile` (an `ext`
 * naming an extension, which this server does not serve, or anything else) do not count as acceptable. A JSON:API
 * client sends its media type to every path, so a plain JSON answer (health) counts as acceptable to it: it is JSON,
 * and what that path serves.
 */
export function accepts(acceptHeader: string | undefined, produced: string): boolean {
  if (acceptHeader === undefined || acceptHeader.trim() === '') return true;
  const [major] = produced.split('/');
  return acceptHeader
    .split(',')
    .map(parseMediaRange)
    .some((range) => {
      if (range.quality <= 0) return false;
      if (range.type === '*/*' || range.type === `${major}/*`) return true;
      if (range.type === JSON_API_MEDIA && produced === JSON_MEDIA) return takesJsonApiParameters(range);
      if (range.type !== produced) return false;
      return produced !== JSON_API_MEDIA || takesJsonApiParameters(range);
    });
}

/**
 * True when a request body's Content-Type is `expected`, with at most a UTF-8 charset parameter and, on JSON:API,
 * the parameters it takes (a `profile`).
 */
export function isContentType(contentType: string | undefined, expected: string): boolean {
  if (!contentType) return false;
  const range = parseMediaRange(contentType);
  if (range.type !== expected) return false;
  for (const [name, value] of range.params) {
    if (name === 'charset' && value.toLowerCase() === 'utf-8') continue;
    if (expected === JSON_API_MEDIA && isTakenJsonApiParameter(name, value)) continue;
    return false;
  }
  return true;
}

/** The charset parameter of a Content-Type, in lower case; undefined when it names none. */
export function charsetOf(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  return parseMediaRange(contentType).params.get('charset')?.toLowerCase();
}
