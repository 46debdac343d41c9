-- Used by the PostgreSQL event bus only; kept here so both backends share
-- one schema and one list of migration versions.
CREATE TABLE event_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  payload TEXT NOT NULL,
  created_at TIMESTAMP NOT NULL
);
CREATE INDEX index_event_outbox_on_created_at ON event_outbox (created_at);
