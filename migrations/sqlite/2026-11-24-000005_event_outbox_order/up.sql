-- Used by the PostgreSQL event bus only; kept here so both backends share
-- one schema and one list of migration versions.
ALTER TABLE event_outbox ADD COLUMN tx BIGINT NOT NULL DEFAULT 0;
CREATE INDEX index_event_outbox_on_tx ON event_outbox (tx);
