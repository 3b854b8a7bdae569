/** Every scope this authorization server grants, and what it lets a partner app do, in plain words. */
export const USER_SCOPES = {
  'user:read': 'See your jobs, paychecks, accounts, earnings balance and transfers',
  'user:read_write':
    'Change your details and default accounts, add or remove bank accounts and cards, and move your earnings',
} as const;

export const CLIENT_SCOPES = {
  'client:lookup': 'Find people of linked employers by known identifiers',
  'client:admin': 'Read organizations, people, jobs and earnings balances of linked employers',
  'health:read': 'Check that the API is up',
  // The operator's own tools: every organization, not only linked ones. Grant it to the operator's client only.
  'admin:operator': 'Run the platform: add employers, set their policies, import rosters, activate jobs',
} as const;

export const OIDC_SCOPES = {
  openid: 'Confirm who you are',
  profile: 'See your name',
  email: 'See your email address',
  offline_access: 'Stay connected when you are not using the app',
  offline: 'Stay connected when you are not using the app',
} as const;

/**
 * The OpenID Connect claims each scope gives, at /userinfo and in the ID token (OpenID Connect Core §5.4): only
 * those of the scopes a token was granted. A person's record has no other standard claims to give.
 */
export const SCOPE_CLAIMS = {
  openid: ['sub'],
  profile: ['name', 'given_name', 'family_name'],
  email: ['email', 'email_verified'],
} as const satisfies Record<string, readonly string[]>;

/** The JWT access token claim that lists the OpenID scopes /userinfo answers for with that token (provider.ts). */
export const USERINFO_SCOPE_CLAIM = 'userinfo_scope';

export type UserScope = keyof typeof USER_SCOPES;
export type ClientScope = keyof typeof CLIENT_SCOPES;
export type Scope = UserScope | ClientScope | keyof typeof OIDC_SCOPES;

export const ALL_SCOPES = { ...OIDC_SCOPES, ...USER_SCOPES, ...CLIENT_SCOPES } as const;

/** Scopes that ask for a refresh token. */
export const OFFLINE_SCOPES: readonly string[] = ['offline_access', 'offline'];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(ALL_SCOPES, value);
}

/** A public client acts only for a signed-in person: it has no secret, so no client_credentials scopes. */
export function scopesAllowedFor(isPublic: boolean): Scope[] {
  const user = [...Object.keys(OIDC_SCOPES), ...Object.keys(USER_SCOPES)] as Scope[];
  return isPublic ? user : [...user, ...(Object.keys(CLIENT_SCOPES) as Scope[])];
}

/**
 * Scopes a token of the REST API may carry, by who it acts for: a client_credentials token acts for the client
 * itself and carries client scopes only; a token of a signed-in person carries user scopes only. Either way,
 * only those registered for the client.
 */
export function apiScopesFor(grant: 'client' | 'user', registered: readonly string[]): string[] {
  const family: Record<string, string> = grant === 'client' ? CLIENT_SCOPES : USER_SCOPES;
  return registered.filter((scope) => Object.hasOwn(family, scope));
}

/** Scopes a token carries, with what they imply: user:read_write includes user:read. */
export function effectiveScopes(scope: string): Set<string> {
  const scopes = new Set(scope.split(' ').filter(Boolean));
  if (scopes.has('user:read_write')) scopes.add('user:read');
  return scopes;
}
