-- Each run read, hashed and parsed every file of the inbound folder, though the folder is never emptied and almost
-- every file in it was read long before: a year of daily files was hundreds of files (up to 256 MB each) read every
-- minute for nothing. This keeps, for each name in the folder, what identifies the file there without reading it
-- (size, modification and change times in nanoseconds, device and inode) and the claimed file its bytes were when
-- it had that identity: a name whose file still has it is not read again. The claim stays ach_return_files by
-- sha256 (the bytes decide); a row here is written only once its bytes are claimed.
CREATE TABLE ach_inbound_files (
  file_name   text PRIMARY KEY,
  sha256      text NOT NULL REFERENCES ach_return_files (sha256) ON DELETE CASCADE,
  size_bytes  bigint NOT NULL,
  mtime_ns    bigint NOT NULL,
  ctime_ns    bigint NOT NULL,
  device      numeric(20) NOT NULL,
  inode       numeric(20) NOT NULL,
  seen_at     timestamptz NOT NULL
);
