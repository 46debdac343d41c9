-- The bus publishes every broadcast through this table, written in the same
-- transaction as the change itself. `tx` is the writing transaction's id:
-- listeners read only rows of transactions older than every one still
-- running, so no row can commit behind a listener's back.
ALTER TABLE event_outbox
  ADD COLUMN tx BIGINT NOT NULL DEFAULT (pg_current_xact_id()::text::bigint);
CREATE INDEX index_event_outbox_on_tx ON event_outbox (tx);
