import { Type } from 'typebox';
import { AppError } from '../errors/app-error.ts';

/** A resource id on the wire: a lower-case UUID. */
export const UuidString = Type.String({ format: 'uuid' });

/**
 * The id in a path. Any string is let through to the handler, so that a malformed id, however long (the router and
 * Node's header limit bound it), is the same 404 RECORD_NOT_FOUND as an id the caller may not see, and reveals nothing.
 */
export function ResourceIdParam<K extends string>(name: K) {
  return Type.Object({ [name]: Type.String({ description: 'A UUID.' }) } as {
    [P in K]: ReturnType<typeof Type.String>;
  });
}

/** One of these strings, as an enumeration in the schema and in the OpenAPI document. */
export function OneOf(values: readonly string[], options: { description?: string } = {}) {
  return Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  );
}

/** A to-one relationship in a response: `{data: {type, id}}`. */
export function RelationshipSchema<T extends string>(type: T) {
  return Type.Object({ data: Type.Object({ type: Type.Literal(type), id: UuidString }) });
}

/** `{type, id}` of a to-one relationship in a request body. */
export function RelationshipBody<T extends string>(type: T) {
  return Type.Object({
    data: Type.Object({ type: Type.Literal(type), id: Type.String({ maxLength: 64 }) }),
  });
}

/** A PATCH names the resource in its body too (JSON:API); it must be the one in the path. */
export function bodyIdMustMatch(bodyId: string, pathId: string): void {
  if (bodyId.toLowerCase() !== pathId.toLowerCase()) {
    throw new AppError('INVALID_PARAMETERS', {
      detail: `data.id (${bodyId}) must be the id in the path (${pathId}).`,
      source: { pointer: '/data/id' },
    });
  }
}

type OpenApiSecurity = Record<string, string[]>[];

/** Reading jobs and accounts (the description's rule): a client with lookup and admin, or the person. */
export const LOOKUP_OR_USER_READ = {
  config: [
    { kind: 'client' as const, scopes: ['client:lookup', 'client:admin'] },
    { kind: 'user' as const, scopes: ['user:read'] },
  ],
  openApi: [
    { oauth_client_credentials_token: ['client:lookup', 'client:admin'] },
    { oauth_user_token: ['user:read'] },
  ] as OpenApiSecurity,
};

/** What only the person reads (transfers, paychecks): their own token with user:read. */
export const USER_READ = {
  config: [{ kind: 'user' as const, scopes: ['user:read'] }],
  openApi: [{ oauth_user_token: ['user:read'] }] as OpenApiSecurity,
};

/** Every change a person makes: their own token with user:read_write. */
export const USER_WRITE = {
  config: [{ kind: 'user' as const, scopes: ['user:read_write'] }],
  openApi: [{ oauth_user_token: ['user:read_write'] }] as OpenApiSecurity,
};
