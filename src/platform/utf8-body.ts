import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.ts';
import { charsetOf } from './media-types.ts';

type Done = (error: Error | null, value?: unknown) => void;
type TextParser = (request: FastifyRequest, body: string, done: Done) => void;

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * A content-type parser (`parseAs: 'buffer'`) that reads the body as UTF-8 and hands the text to `parse`. Fastify's
 * own string reading replaces bytes that are not UTF-8 with U+FFFD, so a name sent in Latin-1 would be stored
 * changed without a word; here it is refused (400), and a body declared in another charset is 415.
 */
export function utf8Body(parse: TextParser) {
  return (request: FastifyRequest, body: Buffer, done: Done): void => {
    const encoding = request.headers['content-encoding'];
    // Bodies are not decoded here: a compressed one would be read as its compressed bytes.
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      done(
        new AppError('UNSUPPORTED_MEDIA_TYPE', {
          detail: 'The request body must be sent as it is: no Content-Encoding, or identity.',
          source: { header: 'Content-Encoding' },
        }),
      );
      return;
    }
    const charset = charsetOf(request.headers['content-type']);
    if (charset !== undefined && charset !== 'utf-8') {
      done(
        new AppError('UNSUPPORTED_MEDIA_TYPE', {
          detail: 'The request body must be UTF-8: send charset=utf-8 or no charset.',
          source: { header: 'Content-Type' },
        }),
      );
      return;
    }
    let text: string;
    try {
      text = decoder.decode(body);
    } catch {
      done(
        new AppError('INVALID_USER_INPUT', {
          detail: 'The request body is not valid UTF-8.',
          source: { pointer: '' },
        }),
      );
      return;
    }
    parse(request, text, done);
  };
}
