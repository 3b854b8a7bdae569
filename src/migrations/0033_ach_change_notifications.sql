-- Notifications of change (COR entries, addenda type 98, codes C01-C14) in the bank's return files: until now only
-- counted, and that count not even kept. Each is kept with the entry it is about (matched as a return is, by its
-- original trace number: the most recent entry with it whose file was written, within the return window; its amount
-- is not compared, a notification's being zero) and the corrected data, for `ewa ach returns --changes`. Nothing
-- applies them: the bank details are the worker's to change. Its file's row going takes them along, as 0032's.
CREATE TABLE ach_change_notifications (
  file_sha256            text NOT NULL REFERENCES ach_return_files (sha256) ON DELETE CASCADE,
  -- Its place among its file's notifications of change, from 1.
  position               integer NOT NULL,
  original_trace_number  text NOT NULL,
  change_code            text NOT NULL,
  corrected_data         text NOT NULL,
  transaction_code       integer NOT NULL,
  individual_id          text NOT NULL,
  original_receiving_dfi text NOT NULL,
  -- The entry it is about; null when it names none of ours.
  instruction_id         uuid REFERENCES ach_entries (instruction_id),
  received_at            timestamptz NOT NULL,
  PRIMARY KEY (file_sha256, position)
);
CREATE INDEX ach_change_notifications_received_idx
  ON ach_change_notifications (received_at DESC, file_sha256, position);
