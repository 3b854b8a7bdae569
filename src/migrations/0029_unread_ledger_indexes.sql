-- Two indexes no statement reads, each written by every movement (an advance: one posting, two entries):
-- ledger_entries (ledger_account_id): balances are kept on the ledger account (0020), so no read sums one
-- account's entries any more; what reads entries by account is the ledger check (ledger/invariants.ts), whose
-- rules sum every account's entries and scan the table whole. ledger_postings (transfer_id): nothing looks a
-- posting up by its transfer; the foreign key to transfers would need it for a deleted or re-keyed transfer, and
-- transfers are neither (the sandbox's reset truncates them with the ledger).
DROP INDEX ledger_entries_account_idx;
DROP INDEX ledger_postings_transfer_idx;
