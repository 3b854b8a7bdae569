-- Rows an advance's path updates soon after writing them, with none of the columns it changes in any index (nor in
-- an index's predicate), get room in their pages for a new row version: PostgreSQL then updates them in place (a HOT
-- update) instead of moving the row to another page, which costs the write-ahead log a lock record on the old row
-- and an entry in each of the table's indexes for the new one. Measured with pg_walinspect on advances through the
-- HTTP stack, about half of these updates were not in place with the previous room (0010, 0011, none): the rail's
-- acceptance of a batch of transfers inserted together (rail_reference, settle_after, rail_accepted_at) found room
-- for a few of them in their page; likewise the outbox's claim (leased_until, attempts) and the balance an advance
-- adds to its earnings balance's ledger account (balance_minor). The settings apply to pages written from now on.
ALTER TABLE transfers SET (fillfactor = 50);
ALTER TABLE outbox SET (fillfactor = 50);
ALTER TABLE ledger_accounts SET (fillfactor = 50);
