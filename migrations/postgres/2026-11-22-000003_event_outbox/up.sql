-- Broadcasts too large for a NOTIFY payload (8000 bytes): the notification
-- carries the row id and listeners read the frame from here.
CREATE TABLE event_outbox (
  id BIGSERIAL PRIMARY KEY,
  payload TEXT NOT NULL,
  created_at TIMESTAMP NOT NULL
);
CREATE INDEX index_event_outbox_on_created_at ON event_outbox (created_at);
