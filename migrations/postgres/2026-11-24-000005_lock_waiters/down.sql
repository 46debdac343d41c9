ALTER TABLE locks DROP COLUMN has_waiters;
DROP TABLE lock_waiters;
