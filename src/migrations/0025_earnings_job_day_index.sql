-- The import's cap of 24 hours a day per job sums a job's rows of each day it records: without this index it read
-- every row the job ever had (through the (job_id, external_id) key) to find those of a few days.
CREATE INDEX earnings_job_worked_on_idx ON earnings (job_id, worked_on);
