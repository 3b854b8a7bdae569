import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { shownText, textProblem } from '../domain/input-text.ts';
import { AppError } from '../errors/app-error.ts';
import { errorDocument } from '../errors/error-document.ts';
import { emptyBodyError, toAppError } from '../errors/to-app-error.ts';
import { duplicateMember, duplicateRefused } from './duplicate-members.ts';
import { inputTextError } from './edge-input.ts';
import { lossyNumber } from './exact-numbers.ts';
import { logServerFailure } from './failure-log.ts';
import { PATH_PARAM_LENGTH_MAX } from './framework-errors.ts';
import { jsonShapeRefused } from './json-shape.ts';
import { accepts, isContentType, JSON_API_MEDIA, JSON_MEDIA } from './media-types.ts';
import { poisoningRefused } from './prototype-members.ts';
import { queryNamesOf, repeatedQueryParameter, unknownQueryParameter } from './query-names.ts';
import { closedRequestBody } from './request-bodies.ts';
import { traceIdOf } from './request-id.ts';
import { OPTIONAL_BODY } from './route-config.ts';
import { utf8Body } from './utf8-body.ts';
import { versionHeaderError } from './version-header.ts';

export const DOCS_PREFIX = '/rest/docs';
/** Paths that speak JSON:API: the REST API and the operator API beside it. */
const JSON_API_PREFIXES = ['/rest/', '/admin/'];

/** True for a route pattern (or a decoded path) of the REST or operator API. */
export function isJsonApiPath(url: string): boolean {
  return JSON_API_PREFIXES.some((prefix) => url.startsWith(prefix));
}

/**
 * True when the request is for the REST or operator API. Decided by the route the router matched, never by the URL
 * as sent: `/%72est/transfers` and `GET http://host/rest/transfers` reach the /rest/transfers route too, and get its
 * negotiation, version check and error documents. A request no route matched is judged by its decoded path.
 */
function routedToJsonApi(request: FastifyRequest): boolean {
  return isJsonApiPath(request.routeOptions.url ?? requestPath(request.url));
}

/** The path of a request target as the router reads it: without scheme, host or query, percent-decoded. */
function requestPath(url: string): string {
  const target = url.startsWith('/') ? url : url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  const path = target.split(/[?#]/)[0] || '/';
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

const METHODS: HTTPMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export interface JsonApiOptions {
  baseUrl: string;
}

/**
 * The JSON:API platform of the REST listener: version header, content negotiation, request ids, one error
 * writer for every failure, 404 and 405. Routes only validate, call a service and serialize.
 */
async function jsonApi(app: FastifyInstance, options: JsonApiOptions): Promise<void> {
  // A second router that knows every path, so that a known path with another method can answer 405.
  const paths = FindMyWay({ maxParamLength: PATH_PARAM_LENGTH_MAX });
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]) as HTTPMethod[];
    for (const method of methods) {
      if (METHODS.includes(method) && !paths.hasRoute(method, route.url))
        paths.on(method, route.url, () => {});
    }
    // The reference page serves HTML, scripts and styles to browsers: JSON:API negotiation does not apply.
    if (route.url.startsWith(DOCS_PREFIX)) route.config = { ...route.config, negotiate: false };
    // Members an operation does not define are refused at every level of its body, on every route.
    if (isJsonApiPath(route.url) && route.schema?.body) {
      route.schema = {
        ...route.schema,
        body: closedRequestBody(route.schema.body, `${route.method} ${route.url}`),
      };
    }
    // An operation takes the query parameters its schema names, none when it names none. Public pages (the
    // reference page, the error catalog, the OpenAPI document) are left as they are.
    if (isJsonApiPath(route.url) && route.config?.negotiate !== false && !route.config?.public)
      route.config = { ...route.config, queryNames: queryNamesOf(route.schema?.querystring) };
  });

  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser(
    JSON_API_MEDIA,
    { parseAs: 'buffer' },
    utf8Body((request, text, done) => {
      // An empty chunked body, which a Content-Length of 0 would have spared the parser: none, where none will do.
      if (text === '' && !takesBody(request)) return done(null, undefined);
      const tooLarge = jsonShapeRefused(text);
      if (tooLarge) return done(tooLarge);
      return parseJson(request, text, (error, value) => {
        if (error) return done(poisoningRefused(text) ?? error);
        const invalid = request.routeOptions.config?.schemaErrorCodes?.invalid ?? 'INVALID_PARAMETERS';
        const twice = duplicateMember(text);
        if (twice !== undefined) return done(duplicateRefused(invalid, twice));
        const lossy = lossyNumber(text);
        if (!lossy) return done(null, value);
        // Digits in full: from 1e21 on, a double prints with an exponent, and 1e308 read as 1e+308 looks unchanged.
        const read = Math.abs(lossy.value) >= 1e21 ? BigInt(lossy.value).toString() : String(lossy.value);
        done(
          new AppError(invalid, {
            detail:
              `${lossy.pointer || 'The body'} is ${shortened(lossy.source)}, more digits than a JSON number ` +
              `keeps: it would be read as ${shortened(read)}. Send the exact value; amounts are whole numbers of ` +
              'minor units.',
            source: { pointer: lossy.pointer },
          }),
        );
      });
    }),
  );

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    if (!routedToJsonApi(request) || request.routeOptions.config?.negotiate === false) return;
    const version = versionHeaderError(request);
    if (version) throw version;
    const mediaType = mediaTypeOf(request);
    if (!accepts(request.headers.accept, mediaType)) {
      throw new AppError('NOT_ACCEPTABLE', {
        detail: `The Accept header must allow ${mediaType}.`,
        source: { header: 'Accept' },
      });
    }
    const bodyMediaType = mediaTypesOf(request).request;
    if (!hasBody(request)) {
      // An operation that takes no body has nothing to parse, whatever Content-Type says: clients that set it on
      // every request (a DELETE's included) would otherwise be told their absent body is empty JSON. One that
      // takes a body still reads it, and says when it is empty.
      if (!takesBody(request)) delete request.headers['content-type'];
    } else if (!isContentType(request.headers['content-type'], bodyMediaType)) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', {
        detail: `The request body must be sent as Content-Type: ${bodyMediaType}.`,
        source: { header: 'Content-Type' },
      });
    }
    reply.type(mediaType);
  });

  // Every string of the request by the one rule of input-text.ts, once, before the route's schema reads it. Routes
  // outside /rest and /admin (the card endpoint) check with their own code; a 404 is checked too.
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.url !== undefined && !routedToJsonApi(request)) return;
    // Sent with neither a body nor a Content-Type, nothing was parsed: said as the parser says an empty body.
    if (request.body === undefined && takesBody(request)) throw emptyBodyError(mediaTypesOf(request).request);
    const error = inputTextError(request, request.routeOptions.config?.schemaErrorCodes?.invalid);
    if (error) throw error;
    const repeated = repeatedQueryParameter(request.query);
    if (repeated) throw repeated;
    const known = request.routeOptions.config?.queryNames;
    const unknown = known && unknownQueryParameter(request.query, known);
    if (unknown) throw unknown;
  });

  // JSON:API allows no media type parameters but ext and profile: drop the charset Fastify adds when serializing.
  // A 204 has no body, so no media type (negotiation set one on every answer).
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode === 204) {
      reply.removeHeader('content-type');
      return payload;
    }
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith(JSON_API_MEDIA))
      reply.header('content-type', JSON_API_MEDIA);
    return payload;
  });

  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error, request.routeOptions.config?.schemaErrorCodes);
    logServerFailure(request.log, appError, error, 'request failed');
    sendErrorDocument(request, reply, appError, options.baseUrl);
  });

  app.setNotFoundHandler((request, reply) => {
    // The router takes the path as sent (percent-encoded, or an absolute-form target) and so does this one.
    const allowed = METHODS.filter((method) => paths.find(method, request.url) !== null);
    const path = shownPath(request.url);
    const error =
      allowed.length > 0
        ? new AppError('METHOD_NOT_ALLOWED', {
            detail: `${path} accepts ${allowed.join(', ')}, not ${request.method}.`,
            headers: { Allow: allowed.join(', ') },
          })
        : new AppError('NOT_FOUND', { detail: `No resource matches ${request.method} ${path}.` });
    sendErrorDocument(request, reply, error, options.baseUrl);
  });
}

/** The error document of this request, as the error handler would write it. */
export function errorDocumentFor(request: FastifyRequest, error: AppError, baseUrl: string) {
  return errorDocument(error, {
    requestId: request.id,
    traceId: traceIdOf(request.headers.traceparent),
    baseUrl,
  });
}

/** Writes an error as the error handler does; for a route that answers a failure without throwing it. */
export function sendErrorDocument(
  request: FastifyRequest,
  reply: FastifyReply,
  error: AppError,
  baseUrl: string,
): FastifyReply {
  const body = errorDocumentFor(request, error, baseUrl);
  if (
    (error.code === 'INVALID_TOKEN' || error.code === 'UNAUTHORIZED') &&
    !error.headers?.['WWW-Authenticate']
  ) {
    reply.header('WWW-Authenticate', 'Bearer');
  }
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.status).type(JSON_API_MEDIA).serializer(JSON.stringify).send(body);
}

/** What a route reads, writes, and writes its errors in. */
export interface RouteMediaTypes {
  /** The media type of its answers and, unless `request` says otherwise, of the bodies it reads. */
  response: string;
  request: string;
  /** Failures on /rest and /admin are JSON:API error documents, whatever the route's own media type. */
  error: string;
}

/**
 * The media types of a route, from its path and config: the negotiation below and the OpenAPI document
 * (openapi.ts) both take them from here, so that the document declares what the server accepts and sends.
 */
export function routeMediaTypes(url: string, config: FastifyContextConfig | undefined): RouteMediaTypes {
  const jsonApi = isJsonApiPath(url);
  const response = config?.mediaType ?? (jsonApi ? JSON_API_MEDIA : JSON_MEDIA);
  return {
    response,
    request: config?.requestMediaType ?? response,
    error: jsonApi ? JSON_API_MEDIA : response,
  };
}

export function mediaTypeOf(request: FastifyRequest): string {
  return mediaTypesOf(request).response;
}

/** The media types of the route a request reached, however its URL was spelled. */
function mediaTypesOf(request: FastifyRequest): RouteMediaTypes {
  return routeMediaTypes(request.routeOptions.url ?? requestPath(request.url), request.routeOptions.config);
}

/** The decoded path, fit to be shown in an error detail. */
function shownPath(url: string): string {
  const path = requestPath(url);
  return textProblem(path) ? shownText(path) : path;
}

/** Whether the operation needs a body: it has a body schema, and its route supplies no default (OPTIONAL_BODY). */
function takesBody(request: FastifyRequest): boolean {
  const { schema } = request.routeOptions;
  return schema?.body !== undefined && !(schema as Record<string, unknown>)[OPTIONAL_BODY];
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  if (length !== undefined) return length !== '0';
  return request.headers['transfer-encoding'] !== undefined;
}

export const jsonApiPlugin = fp(jsonApi, { name: 'json-api', fastify: '5.x' });

/** A number as text, its first 40 characters when longer. */
function shortened(number: string): string {
  return number.length > 40 ? `${number.slice(0, 40)}…` : number;
}
