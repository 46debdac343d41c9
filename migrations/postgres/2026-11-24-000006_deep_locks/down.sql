DROP INDEX index_locks_deep_on_case_id;
ALTER TABLE locks DROP COLUMN deep;
