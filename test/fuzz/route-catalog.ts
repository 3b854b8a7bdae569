import type { FastifyInstance } from 'fastify';

export interface RouteRef {
  method: string;
  /** The path as the router has it: `/rest/jobs/:job_id`. */
  path: string;
}

/**
 * Every route of a listener, read from the router itself (Fastify's printed route tree), so that a route
 * added tomorrow is fuzzed without anyone listing it. HEAD routes Fastify adds for GET are left out (HEAD is
 * one of the methods every route is also tried with).
 */
export function routesOf(app: FastifyInstance): RouteRef[] {
  const stack: string[] = [];
  const routes: RouteRef[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(.*?)(?: \(([^)]*)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    const path = (stack[depth - 1] ?? '') + match[2]!;
    stack[depth] = path;
    stack.length = depth + 1;
    for (const method of (match[3] ?? '').split(', ').filter(Boolean)) {
      if (method !== 'HEAD') routes.push({ method, path });
    }
  }
  return routes;
}

/** Who may call an operation, as its OpenAPI security says. */
export interface Requirement {
  kind: 'user' | 'client';
  scopes: string[];
}

export interface Operation {
  /** `POST /rest/transfers`: the name a failure and EWA_FUZZ_ONLY use. */
  name: string;
  method: string;
  /** The path with `{param}` where the router has `:param`. */
  path: string;
  params: string[];
  /** Query parameters the OpenAPI document declares. */
  query: string[];
  /** Empty: anyone may call it. */
  security: Requirement[];
  /** The body's media type, when the operation takes a body. */
  bodyType?: string | undefined;
}

interface OpenApiOperation {
  parameters?: { in: string; name: string }[];
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, unknown> };
}

const JSON_API = 'application/vnd.api+json';

/**
 * The API listener's operations: the router's routes, with what the served OpenAPI document says of each
 * (security, query parameters, body). Routes the document hides (the error catalog, the document itself, the
 * card preflight) are fuzzed too, as public operations without a body. The reference page's files under
 * /rest/docs are a static site for browsers, outside JSON:API (`negotiate: false`): not operations.
 */
export function apiOperations(api: FastifyInstance): Operation[] {
  const document = api.swagger() as { paths: Record<string, Record<string, OpenApiOperation>> };
  return routesOf(api)
    .filter((route) => !route.path.startsWith('/rest/docs'))
    .map((route) => {
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const described = document.paths[path]?.[route.method.toLowerCase()];
      const media = Object.keys(described?.requestBody?.content ?? {})[0];
      const jsonApi = path.startsWith('/rest/') || path.startsWith('/admin/');
      return {
        name: `${route.method} ${path}`,
        method: route.method,
        path,
        params: [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!),
        query: (described?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        security: (described?.security ?? []).flatMap((requirement) =>
          Object.entries(requirement).map(([scheme, scopes]) => ({
            kind: scheme === 'oauth_user_token' ? ('user' as const) : ('client' as const),
            scopes,
          })),
        ),
        // The document types JSON bodies application/json (defect 15): the JSON:API paths read JSON:API.
        bodyType: media === undefined ? undefined : media === 'text/csv' ? media : jsonApi ? JSON_API : media,
      };
    });
}
