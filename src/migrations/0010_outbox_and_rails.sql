-- Effects that leave the database are written here, in the transaction of the change that causes them, and sent
-- only after it commits (src/outbox/). One row per effect, until it is sent: its id is the idempotency key the
-- receiver is given, and the row is deleted in the transaction that applies the receiver's answer (on the transfer
-- or paycheck), so that it is applied once.
CREATE TABLE outbox (
  id            uuid PRIMARY KEY,
  topic         text NOT NULL CHECK (topic IN ('rail.payment')),
  -- What the effect is about (a transfer or a paycheck).
  subject_id    uuid NOT NULL,
  payload       jsonb NOT NULL,
  created_at    timestamptz NOT NULL,
  due_at        timestamptz NOT NULL,
  attempts      integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- A dispatcher that claimed the row sends it until then; after, another may claim it (the first died).
  leased_until  timestamptz,
  last_error    text
) WITH (fillfactor = 70);
-- Room left in each page, so that a claim (leased_until, attempts: no indexed column) updates its row in place (a
-- HOT update) instead of writing a new entry into every index.
-- The claim's order, whole: a payday writes its payouts with one due_at, and an index on due_at alone made every
-- claim read and sort all of them for the first hundred ids.
CREATE INDEX outbox_due_idx ON outbox (due_at, id);

-- A rail instruction is accepted after the transfer commits: until then the transfer has no rail reference and no
-- settle_after, so the settlement job does not ask about it.
-- An advance returned after it settled (an ACH return) is FAILED with the return code; returned_at says it had
-- settled first, so its final funding stays. The money goes back to the earnings balance when every paycheck that
-- funded it is still open, else to RETURNS_PAYABLE (owed to the worker), and returned_to says which.
ALTER TABLE transfers
  ADD COLUMN returned_at timestamptz,
  ADD COLUMN returned_to text CHECK (returned_to IN ('EARNINGS_BALANCE', 'RETURNS_PAYABLE')),
  ADD CHECK ((returned_at IS NULL) = (returned_to IS NULL));

-- A paycheck's payout returned by the receiving bank: the money is owed to the worker again (RETURNS_PAYABLE).
ALTER TABLE paychecks
  ADD COLUMN payout_returned_at timestamptz,
  ADD COLUMN payout_return_reason text;

-- Money owed back to workers whose payment came back after their paycheck had been paid out.
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check CHECK (kind IN ('EARNINGS_BALANCE',
  'EMPLOYER_PAYROLL_CLEARING', 'PROVIDER_FUNDING', 'FEE_REVENUE', 'EXTERNAL_BANK', 'EXTERNAL_CARD',
  'PAYCHECK_CLEARING', 'RETURNS_PAYABLE'));
INSERT INTO ledger_accounts (id, kind, currency, organization_id)
  SELECT gen_random_uuid(), 'RETURNS_PAYABLE', currency, organization_id FROM ledger_accounts
  WHERE kind = 'PROVIDER_FUNDING' AND account_id IS NULL AND paycheck_id IS NULL;

-- ACH through Nacha files (src/rails/ach/). Each entry is one instruction, in the file of one settlement window.
CREATE TABLE ach_windows (
  id           text PRIMARY KEY,
  cutoff_at    timestamptz NOT NULL,
  -- Set once the window's file is composed; entries then go to a later window.
  cut_at       timestamptz
);
CREATE SEQUENCE ach_trace_seq MAXVALUE 9999999 CYCLE;
CREATE TABLE ach_entries (
  instruction_id         uuid PRIMARY KEY,
  reference              uuid NOT NULL,
  purpose                text NOT NULL CHECK (purpose IN ('ADVANCE', 'PAYCHECK')),
  window_id              text NOT NULL REFERENCES ach_windows (id),
  trace_number           text NOT NULL UNIQUE,
  effective_date         date NOT NULL,
  settles_at             timestamptz NOT NULL,
  destination_account_id uuid NOT NULL REFERENCES accounts (id),
  amount_minor           bigint NOT NULL CHECK (amount_minor > 0),
  created_at             timestamptz NOT NULL
);
CREATE INDEX ach_entries_window_idx ON ach_entries (window_id);
CREATE INDEX ach_entries_reference_idx ON ach_entries (reference);
CREATE TABLE ach_files (
  window_id          text PRIMARY KEY REFERENCES ach_windows (id),
  file_name          text NOT NULL UNIQUE,
  content            text NOT NULL,
  entry_count        integer NOT NULL,
  total_credit_minor bigint NOT NULL,
  entry_hash         text NOT NULL,
  created_at         timestamptz NOT NULL,
  -- Set once the file is in the outbound folder (written whole, then renamed into place).
  written_at         timestamptz
);
-- Return files read from the inbound folder, by their content's hash: a file read again changes nothing.
CREATE TABLE ach_return_files (
  sha256       text PRIMARY KEY,
  file_name    text NOT NULL,
  read_at      timestamptz NOT NULL,
  returns      integer NOT NULL,
  unmatched    integer NOT NULL,
  error        text
);
CREATE TABLE ach_returns (
  trace_number   text PRIMARY KEY REFERENCES ach_entries (trace_number),
  return_code    text NOT NULL,
  file_sha256    text NOT NULL REFERENCES ach_return_files (sha256),
  received_at    timestamptz NOT NULL
);
