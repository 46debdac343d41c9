-- One stream of events: the audit trail and the outbox become one table.
-- A lock change writes one row, which is its audit entry (the lock
-- columns and `action`) and, on PostgreSQL, the frame that announces it
-- (`payload`, read by every instance's listener in id order). A row with
-- no `action` only carries a frame (a saved record, a kick, a membership
-- change) and is pruned once every listener has read it; a row with an
-- `action` is the audit trail and stays. The audit trail keeps its ids.
CREATE TABLE events (
  id BIGSERIAL PRIMARY KEY,
  at TIMESTAMP NOT NULL,
  lock_id BIGINT,
  lockable_type TEXT,
  lockable_id BIGINT,
  case_id BIGINT REFERENCES cases (id) ON DELETE CASCADE,
  actor_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
  holder_id BIGINT,
  action TEXT,
  payload TEXT,
  CONSTRAINT events_audit_whole CHECK (
    action IS NULL OR (lock_id IS NOT NULL AND lockable_type IS NOT NULL
      AND lockable_id IS NOT NULL AND case_id IS NOT NULL AND holder_id IS NOT NULL))
);
INSERT INTO events (id, at, lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, action)
SELECT id, at, lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, action
FROM lock_events ORDER BY id;
SELECT setval(pg_get_serial_sequence('events', 'id'),
  greatest((SELECT max(id) FROM lock_events), (SELECT last_value FROM lock_events_id_seq), 0) + 1, false);
-- The audit trail of a case, newest first, and the cascade when a case is
-- deleted (rows that only carry a frame name no case).
CREATE INDEX index_events_on_case_id_and_id ON events (case_id, id) WHERE case_id IS NOT NULL;
-- The rows the pruning deletes: frames only.
CREATE INDEX index_events_frames_on_id ON events (id) WHERE action IS NULL;
DROP TABLE lock_events;
DROP TABLE event_outbox;
