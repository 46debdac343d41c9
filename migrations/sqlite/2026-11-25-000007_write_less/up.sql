-- Every index is written by every lock taken, and renewing a lock rewrites
-- the entries of the columns it changes (on PostgreSQL, an indexed column
-- changed rules out a heap-only update). Keep only what a query looks up:
-- the reaper reads every live lock anyway (the table holds live locks
-- only), and a user's locks are looked up only when an admin removes the
-- user. The outbox is pruned by id (ids grow with time).
DROP INDEX index_locks_on_user_id;
DROP INDEX index_locks_on_expires_at;
DROP INDEX index_locks_on_last_activity_at;
DROP INDEX index_event_outbox_on_created_at;
