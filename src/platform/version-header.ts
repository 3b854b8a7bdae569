import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.ts';

/** The API version this server serves. */
export const API_VERSION = '3';

/**
 * Our name for the version header. The published description names it after its publisher, `<Name>-API-Version`,
 * and a client generated from it sends that: a header of that form is read the same way, whatever the name.
 */
export const VERSION_HEADER = 'Service-API-Version';
const VERSION_HEADER_FORM = /^[a-z0-9]+-api-version$/;

/** Whether a header (lower case, as Node gives them) is a version header. */
export function isVersionHeader(name: string): boolean {
  // X-API-Version is a generic name a gateway may add for its own versions: not one of these.
  return name.endsWith('-api-version') && VERSION_HEADER_FORM.test(name) && name !== 'x-api-version';
}

/** INVALID_VERSION_HEADER for the first version header that asks for another version, as the client spelled it. */
export function versionHeaderError(request: FastifyRequest): AppError | undefined {
  for (const name in request.headers) {
    if (!isVersionHeader(name) || request.headers[name] === API_VERSION) continue;
    const spelled =
      name === VERSION_HEADER.toLowerCase()
        ? VERSION_HEADER
        : (request.raw.rawHeaders.find((sent) => sent.toLowerCase() === name) ?? name);
    return new AppError('INVALID_VERSION_HEADER', {
      detail: `The ${spelled} header names a version this server does not serve; use ${API_VERSION}.`,
      source: { header: spelled },
    });
  }
  return undefined;
}
