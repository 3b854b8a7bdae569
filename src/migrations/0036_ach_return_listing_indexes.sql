-- `ewa ach returns` pages through all the return files read (--after), latest first. Without these, each page read
-- and sorted the whole of ach_return_files, and counted each listed file's applied returns by reading the whole of
-- ach_returns once a file: a page of 100 files among 200,000 returns took seconds. The first index is the listing's
-- own order, so a page reads its rows and stops; the second finds a file's returns.
CREATE INDEX ach_return_files_read_idx ON ach_return_files (read_at DESC, file_name DESC, sha256);
CREATE INDEX ach_returns_file_idx ON ach_returns (file_sha256);
