-- Card accounts point at their card in the vault; a spent card token is remembered until it would have expired.
ALTER TABLE accounts ADD CONSTRAINT accounts_vault_card_fkey FOREIGN KEY (vault_card_id) REFERENCES card_vault (id);
ALTER TABLE card_token_uses ADD COLUMN expires_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX card_token_uses_expiry_idx ON card_token_uses (expires_at);
-- The check across people (one real card, one person) looks accounts up by fingerprint alone.
CREATE INDEX accounts_fingerprint_idx ON accounts (number_fingerprint)
  WHERE deleted_at IS NULL AND number_fingerprint IS NOT NULL;
