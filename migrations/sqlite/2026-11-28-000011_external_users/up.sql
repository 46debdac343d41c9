-- Users a team's own backend provisions (POST /auth/tokens) are found by
-- its id for them, `external_id`, and may have no email. SQLite cannot drop
-- NOT NULL from a column, so the table is rebuilt (SQLite's documented
-- procedure): with foreign keys off, so that dropping the old table
-- cascades nothing, which SQLite allows only outside a transaction.
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TEMP TABLE users_sequence AS SELECT seq FROM sqlite_sequence WHERE name = 'users';
CREATE TABLE users_new (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  email TEXT UNIQUE,
  name TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  color TEXT NOT NULL,
  admin BOOLEAN NOT NULL DEFAULT 0,
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL,
  deactivated_at TIMESTAMP,
  external_id TEXT UNIQUE
);
INSERT INTO users_new (id, email, name, password_hash, color, admin, created_at, updated_at, deactivated_at)
  SELECT id, email, name, password_hash, color, admin, created_at, updated_at, deactivated_at FROM users;
DROP TABLE users;
ALTER TABLE users_new RENAME TO users;
-- Ids are never used twice: the sequence goes on from where it was.
INSERT INTO sqlite_sequence (name, seq)
  SELECT 'users', seq FROM users_sequence
  WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'users');
UPDATE sqlite_sequence SET seq = (SELECT seq FROM users_sequence)
  WHERE name = 'users' AND seq < (SELECT seq FROM users_sequence);
DROP TABLE users_sequence;
COMMIT;
PRAGMA foreign_keys = ON;
