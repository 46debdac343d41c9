-- Subtree locks: a deep lock (WebDAV's depth infinity) on a page or a case
-- covers everything inside it. Deep locks are few; the partial index finds a
-- case's in one probe (the fast path's acquire asks on every lock).
ALTER TABLE locks ADD COLUMN deep BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX index_locks_deep_on_case_id ON locks (case_id) WHERE deep;
