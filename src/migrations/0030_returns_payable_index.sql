-- The items owed back to workers (`ewa reports returns`, GET /admin/reports/returns): returned payouts and advances
-- returned after payday, oldest first. Partial indexes hold only those few rows, so the report and each of its pages
-- read them alone, never every paycheck or transfer.
CREATE INDEX paychecks_payout_returned_idx ON paychecks (payout_returned_at, id) WHERE payout_returned_at IS NOT NULL;
CREATE INDEX transfers_returns_payable_idx ON transfers (returned_at, id) WHERE returned_to = 'RETURNS_PAYABLE';
