import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import packageJson from '../../package.json' with { type: 'json' };
import { FAVICON_SVG } from './assets/favicon.ts';
import { DOCS_PREFIX, type RouteMediaTypes, routeMediaTypes } from './json-api.ts';
import { JSON_MEDIA } from './media-types.ts';
import { type OperationExamples, operationExamples, sharedErrorExample } from './openapi-examples.ts';
import { HANDLER_REQUIRED_HEADERS, OPTIONAL_BODY } from './route-config.ts';

export interface OpenApiOptions {
  baseUrl: string;
  authUrl: string;
  /** The client id prefilled in the reference page's Authorize dialog: the sandbox's public demo client, or none. */
  prefilledClientId?: string;
}

type RouteSchema = Record<string, unknown> & { response?: Record<string, Record<string, unknown>> };

/**
 * A route's schema as the document shows it: its body in the media type the route reads, and each response in
 * the media type the server sends it in (its own for successes, the error document's for failures).
 */
function withMediaTypes(schema: RouteSchema, media: RouteMediaTypes): RouteSchema {
  const responses = Object.entries(schema.response ?? {}).map(([status, response]) => {
    if (response.type === 'null') return [status, response];
    const type = /^[45]/.test(status) ? media.error : media.response;
    return [status, { description: response.description, content: { [type]: { schema: response } } }];
  });
  return {
    ...schema,
    ...(schema.body ? { consumes: [media.request] } : {}),
    ...(schema.response ? { response: Object.fromEntries(responses) } : {}),
  };
}

/** A route's schema as the document shows it: the headers its handler requires (HANDLER_REQUIRED_HEADERS) required. */
function withRequiredHeaders(schema: RouteSchema): RouteSchema {
  const names = schema[HANDLER_REQUIRED_HEADERS] as string[] | undefined;
  if (!names) return schema;
  const { [HANDLER_REQUIRED_HEADERS]: _mark, ...rest } = schema;
  const headers = rest.headers as { required?: string[] } | undefined;
  return headers
    ? { ...rest, headers: { ...headers, required: [...(headers.required ?? []), ...names] } }
    : rest;
}

/**
 * @fastify/swagger marks every request body required, since Fastify validates one whenever a body schema is given;
 * an operation whose route supplies a default body when none is sent says so with OPTIONAL_BODY, and its body is
 * then documented as optional (the mark itself is not published).
 */
function withOptionalBodies<T>(document: T): T {
  const paths = (document as { paths?: Record<string, Record<string, Record<string, unknown>>> }).paths ?? {};
  for (const operations of Object.values(paths))
    for (const operation of Object.values(operations)) {
      if (!operation[OPTIONAL_BODY]) continue;
      delete operation[OPTIONAL_BODY];
      const body = operation.requestBody as { required?: boolean } | undefined;
      if (body) body.required = false;
    }
  return document;
}

interface DocumentOperation {
  operationId?: string;
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, { example?: unknown }> };
  responses?: Record<string, { content?: Record<string, { example?: unknown }> }>;
}

/**
 * Puts each operation's examples (openapi-examples.ts) on its media types: the request body, the success answer,
 * and an error document for every error status, the operation's own where it has one, else the one every
 * operation answers alike. An operation with no examples is left as it is; the examples test fails on it.
 */
function withExamples<T>(document: T, baseUrl: string): T {
  const examples: Record<string, OperationExamples> = operationExamples(baseUrl);
  const paths = (document as { paths?: Record<string, Record<string, DocumentOperation>> }).paths ?? {};
  for (const operations of Object.values(paths))
    for (const operation of Object.values(operations)) {
      const own = operation.operationId ? examples[operation.operationId] : undefined;
      if (!own) continue;
      const requestTypes = operation.requestBody?.content ?? {};
      if (own.request !== undefined)
        for (const media of Object.values(requestTypes)) media.example = own.request;
      const responses = Object.entries(operation.responses ?? {});
      const success = responses.find(([status, response]) => status.startsWith('2') && response.content);
      const facts = {
        ...(operation.security ? { security: operation.security } : {}),
        ...(success ? { answers: Object.keys(success[1].content ?? {})[0] } : {}),
        ...(Object.keys(requestTypes)[0] ? { reads: Object.keys(requestTypes)[0] } : {}),
      };
      for (const [status, response] of responses) {
        const example = status.startsWith('2')
          ? own.answer
          : (own.errors?.[status] ?? sharedErrorExample(baseUrl, status, facts));
        if (example === undefined) continue;
        for (const media of Object.values(response.content ?? {})) media.example = example;
      }
    }
  return document;
}

/** The reference page's own favicon, in place of the library's. */
const FAVICON = {
  filename: 'favicon.svg',
  rel: 'icon',
  sizes: 'any',
  type: 'image/svg+xml',
  content: Buffer.from(FAVICON_SVG),
};

/**
 * The OpenAPI document is generated from the route schemas, so it cannot drift from what the routes validate and
 * send; the media types come from the same function as content negotiation. The reference page is served from
 * the installed swagger-ui files: it works with no network.
 */
async function openApi(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  await app.register(swagger, {
    transformObject: (document) =>
      withExamples(
        withOptionalBodies('openapiObject' in document ? document.openapiObject : document.swaggerObject),
        options.baseUrl,
      ),
    transform: ({ schema, url, route }) => ({
      schema: schema
        ? (withMediaTypes(
            withRequiredHeaders(schema as RouteSchema),
            routeMediaTypes(url, route.config),
          ) as never)
        : schema,
      url,
    }),
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'EWA Server REST API',
        version: packageJson.version,
        description:
          'Earned-wage access: accounts, jobs, organizations, paychecks, people and transfers as JSON:API ' +
          'resources. Send `Service-API-Version: 3` (optional). Errors are JSON:API error documents; every ' +
          `code is listed at ${options.baseUrl}/rest/errors. A request body member an operation does not list is ` +
          "refused (400 INVALID_PARAMETERS, naming it); JSON:API's meta, at the top of the document and on the " +
          'resource object, is accepted and ignored (but for `meta.disclosure_acknowledged` of a transfer, an ' +
          'extension: docs/integrators/disclosures.md).',
      },
      servers: [{ url: options.baseUrl }],
      // In the reference page's order: the published resources, then this server's extensions.
      tags: [
        ...[
          'Accounts',
          'Jobs',
          'Organizations',
          'Paychecks',
          'People',
          'Transfers',
          'Health',
          'Card Tokenization',
        ].map((name) => ({ name })),
        {
          name: 'Webhooks',
          description:
            'An extension of the published API: webhook endpoints of the calling client, their signing secrets, ' +
            'delivery log and redelivery. Deliveries follow the Standard Webhooks scheme (webhook-id, ' +
            'webhook-timestamp, webhook-signature).',
        },
        {
          name: 'Disclosures',
          description:
            'An extension of the published API: the disclosure documents a person must accept before an advance ' +
            "where their state's law asks for it, and their acceptances (docs/integrators/disclosures.md).",
        },
        {
          name: 'Overpayments',
          description:
            "An extension of the published API: what was advanced above a paycheck's net pay, and how the person " +
            'chooses to have it recovered from later paychecks (docs/integrators/overpayments.md).',
        },
        {
          name: 'Operator',
          description:
            'The operator API (/admin, admin:operator): employers, rosters, jobs, webhooks, the sandbox.',
        },
      ],
      components: {
        securitySchemes: {
          oauth_client_credentials_token: {
            type: 'oauth2',
            flows: {
              clientCredentials: {
                tokenUrl: `${options.authUrl}/oauth2/token`,
                scopes: {
                  'client:lookup': 'Find people by known identifiers.',
                  'client:admin':
                    'Read organizations, people, jobs and earnings balances of linked organizations; manage the ' +
                    "client's webhook endpoints.",
                  'health:read': 'Check that the API is up.',
                  'admin:operator':
                    'Operate the platform (/admin): every organization, its policy and roster, job activation.',
                },
              },
            },
          },
          oauth_user_token: {
            type: 'oauth2',
            flows: {
              authorizationCode: {
                authorizationUrl: `${options.authUrl}/oauth2/auth`,
                tokenUrl: `${options.authUrl}/oauth2/token`,
                scopes: {
                  'user:read': "Read the signed-in person's accounts, jobs, paychecks and transfers.",
                  'user:read_write': "Read and change the signed-in person's data and move earnings.",
                },
              },
            },
          },
        },
      },
    },
  });
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    theme: { title: 'EWA Server — API reference', favicon: [FAVICON] },
    // BaseLayout is the page without swagger-ui's top bar (its logo and a box to load another document).
    uiConfig: { layout: 'BaseLayout', url: '/rest/openapi.json' },
    // PKCE is required of every client here (provider.ts); the sign-in comes back to ./static/oauth2-redirect.html.
    initOAuth: {
      usePkceWithAuthorizationCodeGrant: true,
      ...(options.prefilledClientId ? { clientId: options.prefilledClientId } : {}),
    },
  });
  app.get(
    '/rest/openapi.json',
    { config: { mediaType: JSON_MEDIA, public: true }, schema: { hide: true } },
    async () => app.swagger(),
  );
}

export const openApiPlugin = fp(openApi, { name: 'openapi', fastify: '5.x', dependencies: ['json-api'] });
