ALTER TABLE users DROP COLUMN deactivated_at;
DROP TABLE auth_tokens;
