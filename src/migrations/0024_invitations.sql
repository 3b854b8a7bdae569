-- One-time codes with which a person on an employer's roster sets a password, or replaces one when the operator
-- issued the code as a reset. Only a hash of each code is kept: the code is shown once, to whoever issued it.
CREATE TABLE invitations (
  id                 uuid PRIMARY KEY,
  person_id          uuid NOT NULL REFERENCES people (id),
  organization_id    uuid NOT NULL REFERENCES organizations (id),
  code_hash          text NOT NULL UNIQUE,
  replaces_password  boolean NOT NULL DEFAULT false,
  created_at         timestamptz NOT NULL,
  expires_at         timestamptz NOT NULL,
  used_at            timestamptz,
  revoked_at         timestamptz,
  CHECK (expires_at > created_at),
  CHECK (used_at IS NULL OR revoked_at IS NULL)
);
-- A person has at most one code that can still be used: a new one revokes the old in the same transaction.
CREATE UNIQUE INDEX invitations_open_per_person ON invitations (person_id)
  WHERE used_at IS NULL AND revoked_at IS NULL;
