import type { Server } from 'node:http';

/**
 * Node answers a request whose Expect header is not 100-continue with a bare 417 of its own: no body, none of our
 * headers, no request id. RFC 9110 (§10.1.1) lets a server ignore an expectation it does not know, so such a
 * request goes to the application like any other and is answered in the listener's own way.
 */
export function ignoreUnknownExpectations(server: Server): void {
  server.on('checkExpectation', (request, response) => server.emit('request', request, response));
}
