CREATE TABLE lock_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  lock_id BIGINT NOT NULL,
  lockable_type TEXT NOT NULL,
  lockable_id BIGINT NOT NULL,
  case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
  actor_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
  holder_id BIGINT NOT NULL,
  action TEXT NOT NULL,
  at TIMESTAMP NOT NULL
);
INSERT INTO lock_events (id, lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, action, at)
SELECT id, lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, action, at
FROM events WHERE action IS NOT NULL ORDER BY id;
CREATE INDEX index_lock_events_on_case_id_and_id ON lock_events (case_id, id);
CREATE TABLE event_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  payload TEXT NOT NULL,
  created_at TIMESTAMP NOT NULL
);
DROP TABLE events;
