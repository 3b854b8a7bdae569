import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type {
  ConnectionError,
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
} from 'fastify';
import { AppError } from '../errors/app-error.ts';
import { errorDocument } from '../errors/error-document.ts';
import { toAppError } from '../errors/to-app-error.ts';
import { logRequestCompleted } from './access-log.ts';
import { logServerFailure } from './failure-log.ts';
import { traceIdOf } from './request-id.ts';

/**
 * How long a path segment may be before the router refuses it. Higher than any request line Node reads (16 KiB
 * with the headers), so that a long id always reaches its route and is answered there as a malformed id of any
 * length is (on the REST API, 404 RECORD_NOT_FOUND).
 */
export const PATH_PARAM_LENGTH_MAX = 16_384;

const CLOSE_GRACE_MS = 1000;

export interface EdgeErrorOptions {
  /** The media type of the listener's error documents: JSON:API on the REST listener, JSON on the card one. */
  mediaType: string;
  /** Where the error catalog page is, for `links.about`. */
  baseUrl: string;
  /** Request ids of answers given before a request exists (the test app makes them predictable). */
  newId?: (() => string) | undefined;
  /**
   * The answer written before a request exists, given the request target when its first line could be read (a page
   * or an endpoint may want another shape); the listener's error document in `mediaType` when absent.
   */
  connectionAnswer?: (error: AppError, requestId: string, target: string | undefined) => ConnectionAnswer;
}

export interface ConnectionAnswer {
  mediaType: string;
  body: string;
}

/** The request target of the first line of what the parser refused (`GET /path HTTP/1.1`), when it is there. */
function requestTargetOf(error: ConnectionError): string | undefined {
  const packet = (error as ConnectionError & { rawPacket?: unknown }).rawPacket;
  if (!Buffer.isBuffer(packet)) return undefined;
  const firstLine =
    packet.subarray(0, Math.min(packet.length, 8192)).toString('latin1').split('\r\n')[0] ?? '';
  return firstLine.split(' ')[1];
}

/**
 * The listener options that put the errors Fastify and Node answer on their own (before a route, a hook or the
 * error handler runs) into the listener's error document, with an `X-Request-Id`: a path that is not valid
 * percent-encoding, a path segment over the router's limit, and what Node's HTTP parser refuses (headers over
 * 16 KiB, a Content-Length beside a Transfer-Encoding, a request not received in time, malformed HTTP).
 */
export function edgeErrorOptions(
  options: EdgeErrorOptions,
): Pick<FastifyServerOptions, 'frameworkErrors' | 'clientErrorHandler' | 'routerOptions'> {
  return {
    routerOptions: { maxParamLength: PATH_PARAM_LENGTH_MAX },
    frameworkErrors: (error, request, reply) => answerFrameworkError(error, request, reply, options),
    clientErrorHandler(this: FastifyInstance, error: ConnectionError, socket: Socket) {
      answerConnectionError(this, error, socket, options);
    },
  };
}

/** The router's refusals come before any hook, so the request id and the access line are written here. */
function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
  options: EdgeErrorOptions,
): void {
  const appError = frameworkAppError(error);
  logServerFailure(request.log, appError, error, 'request failed');
  reply.raw.once('finish', () => logRequestCompleted(request, reply));
  const body = errorDocument(appError, {
    requestId: request.id,
    traceId: traceIdOf(request.headers.traceparent),
    baseUrl: options.baseUrl,
  });
  reply
    .code(appError.status)
    .header('X-Request-Id', request.id)
    // Set here: the listener's onSend hooks do not run for an answer given before routing.
    .header('Cache-Control', 'no-store')
    .type(options.mediaType)
    .serializer(JSON.stringify)
    .send(body);
}

function frameworkAppError(error: FastifyError): AppError {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return new AppError('INVALID_USER_INPUT', {
        detail: 'The request path is not a valid URL path: check its percent-encoding (UTF-8, %XX).',
      });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('INVALID_PARAMETERS', {
        detail: `A path segment is longer than ${PATH_PARAM_LENGTH_MAX} characters.`,
      });
    default:
      return toAppError(error);
  }
}

const CONNECT_REFUSED = 'ERR_CONNECT_NOT_SERVED';

/**
 * Node hands a CONNECT request (a tunnel, which only a proxy serves) to 'connect' listeners, and with none closes the
 * connection without a word. It is answered 405 as the listener answers what its parser refuses.
 */
export function refuseConnect(server: Server): void {
  server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    const error = Object.assign(new Error('CONNECT is not served: this is not a proxy'), {
      code: CONNECT_REFUSED,
    });
    afterAnswersInFlight(socket, () => server.emit('clientError', error, socket));
  });
}

/**
 * Calls `then` once the answers to the requests sent before on this connection (pipelined) are written: Node hands
 * over the connection as soon as it reads the CONNECT, while those may still be running.
 */
function afterAnswersInFlight(socket: Socket, then: () => void): void {
  const answer = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!answer || answer.writableFinished || socket.destroyed) {
    then();
    return;
  }
  // The next pipelined answer takes the connection when this one finishes.
  const next = () => setImmediate(() => afterAnswersInFlight(socket, then));
  answer.once('finish', next);
}

/** What Node's HTTP parser refused, by its error code. */
function connectionAppError(error: ConnectionError): AppError {
  switch (error.code) {
    case CONNECT_REFUSED:
      return new AppError('METHOD_NOT_ALLOWED', {
        detail: 'CONNECT is not served here: this server is not a proxy.',
        // A tunnel's target (host:port) is no resource of ours: it allows no method (RFC 9110 §10.2.1).
        headers: { Allow: '' },
      });
    case 'HPE_HEADER_OVERFLOW':
      return new AppError('REQUEST_HEADERS_TOO_LARGE');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('REQUEST_TIMEOUT');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new AppError('PAYLOAD_TOO_LARGE', { detail: 'The chunk extensions of the body are too large.' });
    default:
      return new AppError('INVALID_USER_INPUT', {
        detail:
          'The request is not well-formed HTTP/1.1 (for example a Content-Length beside a Transfer-Encoding, ' +
          'or a malformed request line or header).',
      });
  }
}

/**
 * Node's parser failed before a request existed: the answer is written to the socket as raw HTTP/1.1, with a fresh
 * request id (the request's own X-Request-Id could not be read), and the connection is closed, since what follows
 * on it cannot be trusted. As Node does, nothing is written when a response on this connection has already begun.
 */
function answerConnectionError(
  app: FastifyInstance,
  error: ConnectionError,
  socket: Socket,
  options: EdgeErrorOptions,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const appError = connectionAppError(error);
  const requestId = (options.newId ?? randomUUID)();
  app.log.info(
    { request_id: requestId, status: appError.status, err: { code: error.code, message: error.message } },
    'request refused by the HTTP parser',
  );
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy(error);
    return;
  }
  const { mediaType, body } = options.connectionAnswer
    ? options.connectionAnswer(appError, requestId, requestTargetOf(error))
    : {
        mediaType: options.mediaType,
        body: JSON.stringify(errorDocument(appError, { requestId, baseUrl: options.baseUrl })),
      };
  // Ended rather than destroyed at once: a reset could discard the answer before the client reads it. A client
  // that keeps the connection open is cut off a second later.
  socket.end(
    `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\n` +
      `Content-Type: ${mediaType}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      'Cache-Control: no-store\r\n' +
      Object.entries(appError.headers ?? {})
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      'Connection: close\r\n\r\n' +
      body,
  );
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}
