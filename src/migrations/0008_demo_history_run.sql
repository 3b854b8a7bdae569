-- The demo history is now recorded as a scheduled run ('demo-history', 'once') so that one cut off is finished by
-- the next start. A database seeded before this had its history made by the process that claimed it: mark it DONE
-- so that it is not made again.
INSERT INTO scheduled_runs (job_name, run_key, state, started_at, finished_at)
SELECT 'demo-history', 'once', 'DONE', now(), now()
WHERE EXISTS (SELECT 1 FROM app_settings WHERE key = 'demo_data_seeded_at')
ON CONFLICT DO NOTHING;
