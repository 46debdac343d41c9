ALTER TABLE presences RESET (fillfactor);
DROP INDEX index_presences_on_instance_id;
CREATE INDEX index_presences_on_last_seen_at ON presences (last_seen_at);
