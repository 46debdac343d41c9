-- An audit row carries the frame that announced it only until every
-- listener has read it; then the frame is cleared. This index finds the
-- rows still carrying one, oldest first, without reading the whole trail.
CREATE INDEX index_events_audit_frames_on_id ON events (id) WHERE action IS NOT NULL AND payload IS NOT NULL;
