-- One stream of events: the audit trail and the outbox become one table
-- (see the PostgreSQL migration). SQLite's broadcasts stay in the process,
-- so here its rows are the audit trail; the columns are the same on both.
CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
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
-- AUTOINCREMENT: never an id the audit trail used before. The copy above
-- made the table's row of sqlite_sequence (when it copied anything): it is
-- replaced by one that counts every id lock_events ever handed out.
DELETE FROM sqlite_sequence WHERE name = 'events';
INSERT INTO sqlite_sequence (name, seq)
SELECT 'events', max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'lock_events'), 0),
                     coalesce((SELECT max(id) FROM lock_events), 0));
-- The audit trail of a case, newest first, and the cascade when a case is
-- deleted (rows that only carry a frame name no case).
CREATE INDEX index_events_on_case_id_and_id ON events (case_id, id) WHERE case_id IS NOT NULL;
CREATE INDEX index_events_frames_on_id ON events (id) WHERE action IS NULL;
DROP TABLE lock_events;
DROP TABLE event_outbox;
