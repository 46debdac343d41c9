-- The waiting line: tabs waiting for a locked record, served in id (join) order.
CREATE TABLE lock_waiters (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  lockable_type TEXT NOT NULL,
  lockable_id BIGINT NOT NULL,
  case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
  user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  session_id TEXT NOT NULL,
  user_agent TEXT,
  created_at TIMESTAMP NOT NULL,
  expires_at TIMESTAMP NOT NULL,
  disconnected_at TIMESTAMP,
  -- A tab is a user and a session id (session ids are not secret), as for locks.
  UNIQUE (lockable_type, lockable_id, user_id, session_id)
);
CREATE INDEX index_lock_waiters_on_case_id ON lock_waiters (case_id);
CREATE INDEX index_lock_waiters_on_user_id ON lock_waiters (user_id);
CREATE INDEX index_lock_waiters_on_session_id ON lock_waiters (session_id);
CREATE INDEX index_lock_waiters_on_expires_at ON lock_waiters (expires_at);

-- Set (in the joining transaction, on the lock's row) when a tab joins the line
-- for this holding: the fast path's one-statement release leaves such a lock to
-- the general path, which hands the record over.
ALTER TABLE locks ADD COLUMN has_waiters BOOLEAN NOT NULL DEFAULT 0;
