import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors/app-error.ts';

function hostHeaders(rawHeaders: readonly string[]): string[] {
  const values: string[] = [];
  for (let index = 0; index < rawHeaders.length; index += 2)
    if (rawHeaders[index]!.length === 4 && rawHeaders[index]!.toLowerCase() === 'host')
      values.push(rawHeaders[index + 1]!);
  return values;
}

/** RFC 3986's host and port: a name, an IPv4 or a bracketed IPv6 address; never a list or spaces. */
const ONE_HOST = /^[A-Za-z0-9._~!$&'()*+;=%:[\]-]*$/;

/** Why the Host header cannot be taken, if it cannot. */
function hostProblem(values: readonly string[], httpVersion: string): string | undefined {
  if (values.length > 1) return 'Send one Host header: this request has more than one.';
  if (values.length === 0) {
    // HTTP/1.0 has no Host; Node lets a 1.1 request without one through to us (requireHostHeader: false).
    return httpVersion === '1.0' ? undefined : 'Send a Host header: HTTP/1.1 requires one.';
  }
  return ONE_HOST.test(values[0]!)
    ? undefined
    : 'The Host header must name one host (and port), nothing else.';
}

/**
 * A request with more than one Host header, an HTTP/1.1 request with none, or a Host that is not one host is refused
 * (RFC 9112 §3.2 asks a server for a 400): Node keeps the first of two, and a proxy in front may have routed by the
 * other, or by another part of a list. Each listener answers in its own shape, and closes the connection, whose
 * next request could be read otherwise by the proxy than by us.
 */
async function oneHost(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', async (request, reply) => {
    const problem = hostProblem(hostHeaders(request.raw.rawHeaders), request.raw.httpVersion);
    if (problem === undefined) return;
    // Refused before the hooks that set it on every answer: the caller still gets the id to report.
    reply.header('X-Request-Id', request.id).header('Connection', 'close');
    throw new AppError('INVALID_USER_INPUT', { detail: problem, source: { header: 'Host' } });
  });
}

export const oneHostPlugin = fp(oneHost, { name: 'one-host', fastify: '5.x' });
