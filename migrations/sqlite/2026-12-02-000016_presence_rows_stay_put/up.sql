-- The indexes of PostgreSQL's migration of the same name, where a rewrite
-- of last_seen_at on every heartbeat must not touch an index: an instance's
-- own rows by instance, and none on last_seen_at.
DROP INDEX index_presences_on_last_seen_at;
CREATE INDEX index_presences_on_instance_id ON presences (instance_id);
