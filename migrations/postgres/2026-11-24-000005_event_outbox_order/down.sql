DROP INDEX index_event_outbox_on_tx;
ALTER TABLE event_outbox DROP COLUMN tx;
