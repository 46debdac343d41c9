-- Every heartbeat rewrites the presence row of each open tab (its
-- last_seen_at). While last_seen_at was indexed, none of those rewrites could
-- stay on its page as a heap-only tuple: each added an index entry and left a
-- dead row version that every read of presences stepped over until vacuum
-- came (at 100,000 tabs, 3.6 million in twelve minutes, and the joins and
-- the beats themselves slowed to a crawl). Without that index, and with half
-- of each page left free for the rewrites, a page prunes its own old
-- versions. The stale sweep (a heartbeat a few times a minute) reads the
-- table whole instead; an instance's own rows, which every beat touches,
-- get their index.
DROP INDEX index_presences_on_last_seen_at;
CREATE INDEX index_presences_on_instance_id ON presences (instance_id);
ALTER TABLE presences SET (fillfactor = 50);
