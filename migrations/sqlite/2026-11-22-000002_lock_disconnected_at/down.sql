ALTER TABLE locks DROP COLUMN disconnected_at;
