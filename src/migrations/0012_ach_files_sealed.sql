-- Origination files hold full account numbers: new files are stored sealed (AES-256-GCM, src/crypto/ach-file-secrets.ts)
-- in content_sealed, and content is left empty. content becomes nullable rather than being dropped because a
-- migration cannot seal (the key is not in the database): rows written before this keep their text, and a file not
-- yet written to the outbound folder must still be written, so readers take content_sealed when present, else content.
ALTER TABLE ach_files ADD COLUMN content_sealed bytea;
ALTER TABLE ach_files ALTER COLUMN content DROP NOT NULL;
ALTER TABLE ach_files ADD CONSTRAINT ach_files_content_present CHECK (content IS NOT NULL OR content_sealed IS NOT NULL);
