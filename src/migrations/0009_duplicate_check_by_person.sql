-- The duplicate-advance check reads one person's transfers of the last minutes through transfers_person_idx
-- (person_id, submitted_at) and compares destination and amount on those few rows. An index of its own only cost
-- every transfer one more index entry to write.
DROP INDEX IF EXISTS transfers_person_destination_idx;
