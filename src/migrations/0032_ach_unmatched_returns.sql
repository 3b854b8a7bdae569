-- Returns of a return file that match no entry of ours, or not its amount (src/rails/ach/ach-rail.ts): nothing is
-- applied for them, and until now only their count was kept (ach_return_files.unmatched), so a person could not act
-- on them. Each is kept as the file gave it, for `ewa ach returns --unmatched`. Its file's row going (deleted to read
-- the same bytes again) takes them along: reading the file again keeps them again.
CREATE TABLE ach_unmatched_returns (
  file_sha256           text NOT NULL REFERENCES ach_return_files (sha256) ON DELETE CASCADE,
  -- The return's place among its file's returns, from 1.
  position              integer NOT NULL,
  original_trace_number text NOT NULL,
  amount_minor          bigint NOT NULL,
  return_code           text NOT NULL,
  transaction_code      integer NOT NULL,
  individual_id         text NOT NULL,
  addenda_information   text NOT NULL,
  received_at           timestamptz NOT NULL,
  PRIMARY KEY (file_sha256, position)
);
CREATE INDEX ach_unmatched_returns_received_idx ON ach_unmatched_returns (received_at DESC, file_sha256, position);
