-- One live account per number and person: two requests adding the same bank account at once cannot both win.
DROP INDEX accounts_fingerprint_idx;
CREATE UNIQUE INDEX accounts_person_fingerprint_key ON accounts (person_id, number_fingerprint)
  WHERE deleted_at IS NULL AND number_fingerprint IS NOT NULL;
-- Refusing to delete an account that a job pays into looks jobs up by their default accounts.
CREATE INDEX jobs_default_depository_idx ON jobs (direct_deposit_default_depository_id)
  WHERE direct_deposit_default_depository_id IS NOT NULL;
CREATE INDEX jobs_default_card_idx ON jobs (direct_deposit_default_card_id)
  WHERE direct_deposit_default_card_id IS NOT NULL;
CREATE INDEX transfers_destination_pending_idx ON transfers (destination_account_id) WHERE status = 'PENDING';
CREATE INDEX jobs_earnings_balance_idx ON jobs (earnings_balance_account_id);
