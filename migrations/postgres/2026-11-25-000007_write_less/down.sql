DROP FUNCTION baton_fast_card_update(BIGINT, BIGINT, BIGINT, TEXT, BIGINT, BIGINT, TEXT, INTEGER, BIGINT, BIGINT, TEXT[]);
CREATE INDEX index_event_outbox_on_created_at ON event_outbox (created_at);
CREATE INDEX index_locks_on_last_activity_at ON locks (last_activity_at);
CREATE INDEX index_locks_on_expires_at ON locks (expires_at);
CREATE INDEX index_locks_on_user_id ON locks (user_id);
