-- What the authorization server needs beyond 0001: one active signing key per purpose and algorithm, revoked access tokens that
-- API processes learn about without a per-request query, and sign-in throttling shared by every process.

-- One active key per purpose and algorithm: access tokens are signed ES256 (fast to sign), ID tokens RS256.
CREATE UNIQUE INDEX signing_keys_one_active_idx ON signing_keys (purpose, alg) WHERE retired_at IS NULL;

-- An access token (by jti), a whole grant (by grant id) or every token of a deleted client that must no longer be
-- honoured, until it would have expired anyway.
CREATE TABLE oauth_revocations (
  kind        text NOT NULL CHECK (kind IN ('TOKEN', 'GRANT', 'CLIENT')),
  value       text NOT NULL,
  revoked_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (kind, value)
);
CREATE INDEX oauth_revocations_revoked_idx ON oauth_revocations (revoked_at);

-- Failed sign-ins per account and per address; backoff grows with failures and resets on success.
CREATE TABLE login_throttle (
  key           text PRIMARY KEY,
  failures      integer NOT NULL DEFAULT 0,
  locked_until  timestamptz,
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- How a confidential client proves itself at the token endpoint: a secret (basic or post) or a signed JWT.
ALTER TABLE oauth_clients ADD COLUMN auth_method text NOT NULL DEFAULT 'client_secret_basic'
  CHECK (auth_method IN ('none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'));
