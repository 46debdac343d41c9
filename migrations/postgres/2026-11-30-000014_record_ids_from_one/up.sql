-- 2026-11-26-000008 seeded record_ids from the old sequences' last_value.
-- A sequence never used has last_value 1 (is_called false), so on a new
-- database every casebook type started at 2. A type whose seed is 1 and
-- that has no record and no lock, line or audit row naming it never used
-- an id: its row goes, and its first record is 1 again. A data fix only:
-- an instance of the previous release reads and writes record_ids as before.
DELETE FROM record_ids
WHERE last_id = 1
  AND record_type IN ('Page', 'Card', 'Edgenote')
  AND NOT EXISTS (SELECT 1 FROM records r WHERE r.record_type = record_ids.record_type)
  AND NOT EXISTS (SELECT 1 FROM locks l WHERE l.lockable_type = record_ids.record_type)
  AND NOT EXISTS (SELECT 1 FROM lock_waiters w WHERE w.lockable_type = record_ids.record_type)
  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.lockable_type = record_ids.record_type);
