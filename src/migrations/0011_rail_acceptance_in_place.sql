-- When the rail accepted a payment (its answer to the dispatcher): with submitted_at, how long an instruction waited
-- in the outbox, for operators and the benchmark of the outbox's lag.
ALTER TABLE transfers ADD COLUMN rail_accepted_at timestamptz;
ALTER TABLE paychecks ADD COLUMN payout_rail_accepted_at timestamptz;

-- The rail's acceptance sets rail_reference, settle_after and rail_accepted_at on a transfer written moments before.
-- With none of them indexed and room left in the row's page, PostgreSQL updates the row in place (a HOT update)
-- instead of adding an entry to each of the table's indexes for the new row version. The settlement job finds the
-- pending transfers by this index and reads settle_after from the rows.
DROP INDEX transfers_pending_idx;
CREATE INDEX transfers_pending_idx ON transfers (id) WHERE status = 'PENDING';
ALTER TABLE transfers SET (fillfactor = 85);
-- The same for a paycheck's payout (paychecks keep room in their pages already: 0007).
DROP INDEX paychecks_in_transit_idx;
CREATE INDEX paychecks_in_transit_idx ON paychecks (id) WHERE status = 'IN_TRANSIT';
