DELETE FROM locks WHERE lockable_param IS NOT NULL;
DELETE FROM lock_waiters WHERE lockable_param IS NOT NULL;
ALTER TABLE lock_waiters DROP COLUMN lockable_param;
ALTER TABLE locks DROP COLUMN lockable_param;
DROP TABLE external_records;
