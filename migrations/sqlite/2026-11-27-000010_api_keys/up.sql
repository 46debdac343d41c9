-- API keys: what a team's own backend authenticates with to mint baton
-- tokens for its users. Only a key's SHA-256 is kept; `baton key add`
-- prints the key once.
CREATE TABLE api_keys (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  created_at TIMESTAMP NOT NULL,
  last_used_at TIMESTAMP,
  revoked_at TIMESTAMP
);
-- A name names one live key; a revoked key's name may be used again.
CREATE UNIQUE INDEX index_api_keys_on_live_name ON api_keys (name) WHERE revoked_at IS NULL;
CREATE UNIQUE INDEX index_api_keys_on_key_hash ON api_keys (key_hash);
