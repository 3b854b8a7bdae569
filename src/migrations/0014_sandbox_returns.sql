-- The advances the sandbox rail settles and then returns (its return amounts: SANDBOX_RETURN_AMOUNTS in
-- src/rails/sandbox-rail.ts), until they come back. The settlement job looks for them every minute
-- (src/money/sandbox-returns.ts) through this index, which holds only those rows, however many advances settle. It
-- names no column the rail's acceptance writes (rail_reference, settle_after, rail_accepted_at), so that update
-- stays in place (HOT, migration 0011). A new return amount needs a migration that redefines it.
CREATE INDEX transfers_sandbox_return_idx ON transfers (id)
  WHERE status = 'SETTLED' AND returned_at IS NULL AND amount_minor = 505;
