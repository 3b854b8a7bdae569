-- An idempotency key is now held by the transaction that runs its request (an advisory lock), and its row is
-- written only with the answer, in that transaction. Rows of requests that never answered are dropped.
DELETE FROM idempotency_keys WHERE state <> 'COMPLETE' OR response_status IS NULL OR response_body IS NULL;
ALTER TABLE idempotency_keys
  DROP COLUMN state,
  DROP COLUMN locked_until,
  ALTER COLUMN response_status SET NOT NULL,
  ALTER COLUMN response_body SET NOT NULL;

-- Settlement pages through what is due by (time, id), so each page is an index range whatever is left.
DROP INDEX paychecks_in_transit_idx;
CREATE INDEX paychecks_in_transit_idx ON paychecks (payout_settle_after, id) WHERE status = 'IN_TRANSIT';
DROP INDEX transfers_pending_idx;
CREATE INDEX transfers_pending_idx ON transfers (settle_after, id) WHERE status = 'PENDING';

-- Payroll pages through the closed paychecks by id.
CREATE INDEX paychecks_processing_idx ON paychecks (id) WHERE status = 'PROCESSING';

-- The unique constraint on (job_id, pay_period_starts_at) is that index already.
DROP INDEX paychecks_job_period_idx;
