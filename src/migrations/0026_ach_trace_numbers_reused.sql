-- Trace numbers come from ach_trace_seq (0010: 7 digits, MAXVALUE 9999999 CYCLE), so after 9,999,999 entries they
-- are given again; a trace number UNIQUE forever made every entry after the wrap fail, and the rail stopped. Nacha
-- asks a trace number to be unique within a file: one window is one file (ach_files.window_id), so it is unique
-- within its window. A return names the original trace number: it is matched to the most recent entry with that
-- trace number (and amount) whose file was written and that is not yet returned, within the return window
-- (src/rails/ach/ach-rail.ts), so a return is kept by the entry it returns (instruction_id), not by trace number.
ALTER TABLE ach_returns ADD COLUMN instruction_id uuid REFERENCES ach_entries (instruction_id);
-- Until now a trace number named one entry.
UPDATE ach_returns r SET instruction_id = e.instruction_id FROM ach_entries e WHERE e.trace_number = r.trace_number;
ALTER TABLE ach_returns ALTER COLUMN instruction_id SET NOT NULL;
ALTER TABLE ach_returns DROP CONSTRAINT ach_returns_pkey;
ALTER TABLE ach_returns DROP CONSTRAINT ach_returns_trace_number_fkey;
ALTER TABLE ach_returns ADD PRIMARY KEY (instruction_id);

ALTER TABLE ach_entries DROP CONSTRAINT ach_entries_trace_number_key;
ALTER TABLE ach_entries ADD CONSTRAINT ach_entries_window_trace_key UNIQUE (window_id, trace_number);
CREATE INDEX ach_entries_trace_idx ON ach_entries (trace_number, created_at DESC);
