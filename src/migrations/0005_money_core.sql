-- The money core: what each paycheck has made accessible and how its remainder is paid out on payday.
-- accessible_minor is the share of the paycheck credited to the earnings balance so far (paycheck-origin
-- transfers); total_debited_minor is the part of it taken by advances that have not failed. Both are caches of
-- the ledger, updated in the transaction that posts the entries; src/ledger/invariants.ts proves them equal.
ALTER TABLE paychecks
  ADD COLUMN accessible_minor bigint NOT NULL DEFAULT 0 CHECK (accessible_minor >= 0),
  ADD COLUMN payout_account_id uuid REFERENCES accounts (id),
  ADD COLUMN payout_minor bigint CHECK (payout_minor >= 0),
  ADD COLUMN payout_rail_reference text,
  ADD COLUMN payout_settle_after timestamptz,
  ADD COLUMN payout_held_reason text,
  ADD COLUMN deposited_at timestamptz,
  ADD CONSTRAINT paychecks_debited_within_accessible CHECK (total_debited_minor <= accessible_minor),
  ADD CONSTRAINT paychecks_accessible_within_net CHECK (accessible_minor <= net_earnings_minor);
CREATE INDEX paychecks_job_period_idx ON paychecks (job_id, pay_period_starts_at);
CREATE INDEX paychecks_in_transit_idx ON paychecks (payout_settle_after) WHERE status = 'IN_TRANSIT';

-- A transfer made by a person names the job whose earnings balance it draws on; system transfers name the paycheck.
CREATE INDEX transfers_origin_paycheck_idx ON transfers (origin_paycheck_id) WHERE origin_paycheck_id IS NOT NULL;
CREATE INDEX transfers_person_destination_idx ON transfers (person_id, destination_account_id, submitted_at);

-- Postings are looked up by paycheck (payday) and every ledger account of a paycheck is unique already.
CREATE INDEX ledger_postings_paycheck_idx ON ledger_postings (paycheck_id) WHERE paycheck_id IS NOT NULL;

-- System ledger accounts always belong to one organization, so (kind, currency, organization) identifies one.
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_system_has_organization
  CHECK (account_id IS NOT NULL OR paycheck_id IS NOT NULL OR organization_id IS NOT NULL);
