-- An advance reads the paychecks of one job that can still fund it. Without an index of its own the planner may
-- AND the job's index with paychecks_open_idx, which lists every open paycheck of every job: a cost per advance
-- that grows with the number of workers.
CREATE INDEX paychecks_fundable_idx ON paychecks (job_id, pay_period_starts_at)
  WHERE status IN ('ESTIMATED', 'PROCESSING');

-- Each advance updates its paychecks' total_debited_minor, which no index holds; room left on each page lets
-- PostgreSQL write the new row version beside the old one (a HOT update) instead of adding an entry to every index.
ALTER TABLE paychecks SET (fillfactor = 80);
