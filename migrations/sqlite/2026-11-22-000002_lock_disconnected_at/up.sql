-- Set when the holder's tab closed: its lease then only runs for the grace period,
-- and its end is reported as 'disconnected'.
ALTER TABLE locks ADD COLUMN disconnected_at TIMESTAMP;
