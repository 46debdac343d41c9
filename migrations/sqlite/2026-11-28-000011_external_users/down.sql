-- Users without an email cannot be kept: they are removed with what is theirs.
DELETE FROM users WHERE email IS NULL;
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TEMP TABLE users_sequence AS SELECT seq FROM sqlite_sequence WHERE name = 'users';
CREATE TABLE users_old (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  email TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  color TEXT NOT NULL,
  admin BOOLEAN NOT NULL DEFAULT 0,
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL,
  deactivated_at TIMESTAMP
);
INSERT INTO users_old SELECT id, email, name, password_hash, color, admin, created_at, updated_at, deactivated_at FROM users;
DROP TABLE users;
ALTER TABLE users_old RENAME TO users;
INSERT INTO sqlite_sequence (name, seq)
  SELECT 'users', seq FROM users_sequence
  WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'users');
DROP TABLE users_sequence;
COMMIT;
PRAGMA foreign_keys = ON;
