import type { Config } from '../config.ts';

/**
 * Field names whose values never reach a log line, at any depth we log. `body` goes whole: a request body can carry
 * card data under names nobody listed (a misspelt `card_numbr` still holds a card number).
 */
export const REDACTED_FIELDS = [
  'body',
  'authorization',
  'cookie',
  'set-cookie',
  'card_number',
  'cvv',
  'account_number',
  'routing_number',
  'token',
  'generic_token',
  'access_token',
  'refresh_token',
  'id_token',
  'client_secret',
  'password',
  'invitation_code',
] as const;

function redactPaths(): string[] {
  const paths: string[] = [];
  for (const field of REDACTED_FIELDS) {
    const key = /^[a-z_]+$/.test(field) ? field : `["${field}"]`;
    const join = key.startsWith('[') ? '' : '.';
    paths.push(key.startsWith('[') ? `req.headers${key}` : `req.headers.${key}`);
    paths.push(key.startsWith('[') ? `res.headers${key}` : `res.headers.${key}`);
    paths.push(`${key}`, `*${join}${key}`, `*.*${join}${key}`, `*.*.*${join}${key}`);
  }
  return paths;
}

export function loggerOptions(config: Pick<Config, 'logLevel'>) {
  return {
    level: config.logLevel,
    redact: { paths: redactPaths(), censor: '[REDACTED]' },
    serializers: {
      // The query string can carry codes and tokens; the route and path are enough to find a request.
      req: (request: { method: string; url: string }) => ({
        method: request.method,
        path: request.url.split('?')[0],
      }),
    },
  };
}
