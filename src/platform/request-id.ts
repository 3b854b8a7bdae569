import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * A caller's X-Request-Id is kept when it is a plain token, so a partner can follow one request through both
 * systems; anything else gets a fresh UUID, so logs never carry attacker-shaped text.
 */
export function requestIdOf(request: IncomingMessage, newId: () => string = randomUUID): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : newId();
}

/** The trace id of a W3C `traceparent` header, when the caller sent a well-formed one. */
export function traceIdOf(traceparent: string | string[] | undefined): string | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const match = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/.exec(traceparent.trim());
  return match && !/^0+$/.test(match[1]!) ? match[1] : undefined;
}
