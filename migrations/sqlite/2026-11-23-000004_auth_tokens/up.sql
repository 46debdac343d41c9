-- One row per login token: the JWT names its row (`jti`), and a token is
-- valid only while its row is neither revoked nor expired. Logout revokes one
-- row; a password change or a removed user revokes all of a user's rows.
CREATE TABLE auth_tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at TIMESTAMP NOT NULL,
  expires_at TIMESTAMP NOT NULL,
  revoked_at TIMESTAMP
);
CREATE INDEX index_auth_tokens_on_user_id ON auth_tokens (user_id);
CREATE INDEX index_auth_tokens_on_expires_at ON auth_tokens (expires_at);

-- A removed user is deactivated, not deleted: the audit trail keeps naming them.
ALTER TABLE users ADD COLUMN deactivated_at TIMESTAMP;
