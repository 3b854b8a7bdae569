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
 * True when an Accept header allows `produced`. JSON:API ranges that carry parameters (ext, profile) ask for
 * extensions this server does not serve, so they do not count as acceptable. A JSON:API client sends its media type
 * to every path, so a plain JSON answer (health) counts as acceptable to it: it is JSON, and what that path serves.
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
      if (range.type === JSON_API_MEDIA && produced === JSON_MEDIA) return range.params.size === 0;
      if (range.type !== produced) return false;
      return produced !== JSON_API_MEDIA || range.params.size === 0;
    });
}

/** True when a request body's Content-Type is `expected`, with at most a UTF-8 charset parameter. */
export function isContentType(contentType: string | undefined, expected: string): boolean {
  if (!contentType) return false;
  const range = parseMediaRange(contentType);
  if (range.type !== expected) return false;
  for (const [name, value] of range.params) {
    if (name !== 'charset' || value.toLowerCase() !== 'utf-8') return false;
  }
  return true;
}

/** The charset parameter of a Content-Type, in lower case; undefined when it names none. */
export function charsetOf(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  return parseMediaRange(contentType).params.get('charset')?.toLowerCase();
}
