CREATE TABLE users (
  id BIGSERIAL PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  color TEXT NOT NULL,
  admin BOOLEAN NOT NULL DEFAULT FALSE,
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL
);

CREATE TABLE cases (
  id BIGSERIAL PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  version BIGINT NOT NULL DEFAULT 1,
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL
);

CREATE TABLE memberships (
  id BIGSERIAL PRIMARY KEY,
  case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
  user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('reader', 'editor', 'manager')),
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL,
  UNIQUE (case_id, user_id)
);
CREATE INDEX index_memberships_on_user_id ON memberships (user_id);

CREATE TABLE pages (
  id BIGSERIAL PRIMARY KEY,
  case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  title TEXT NOT NULL,
  version BIGINT NOT NULL DEFAULT 1,
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL
);
CREATE INDEX index_pages_on_case_id ON pages (case_id);

CREATE TABLE cards (
  id BIGSERIAL PRIMARY KEY,
  case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
  page_id BIGINT NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  content TEXT NOT NULL,
  version BIGINT NOT NULL DEFAULT 1,
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL
);
CREATE INDEX index_cards_on_case_id ON cards (case_id);
CREATE INDEX index_cards_on_page_id ON cards (page_id);

CREATE TABLE edgenotes (
  id BIGSERIAL PRIMARY KEY,
  case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
  slug TEXT NOT NULL,
  caption TEXT NOT NULL,
  content TEXT NOT NULL,
  version BIGINT NOT NULL DEFAULT 1,
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL,
  UNIQUE (case_id, slug)
);

-- A lock's id is its token; a sequence never hands out a value twice.
CREATE TABLE locks (
  id BIGSERIAL PRIMARY KEY,
  lockable_type TEXT NOT NULL,
  lockable_id BIGINT NOT NULL,
  case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
  user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  session_id TEXT,
  user_agent TEXT,
  created_at TIMESTAMP NOT NULL,
  expires_at TIMESTAMP NOT NULL,
  last_activity_at TIMESTAMP NOT NULL,
  UNIQUE (lockable_type, lockable_id)
);
CREATE INDEX index_locks_on_case_id ON locks (case_id);
CREATE INDEX index_locks_on_user_id ON locks (user_id);
CREATE INDEX index_locks_on_session_id ON locks (session_id);
CREATE INDEX index_locks_on_expires_at ON locks (expires_at);
CREATE INDEX index_locks_on_last_activity_at ON locks (last_activity_at);

CREATE TABLE lock_events (
  id BIGSERIAL PRIMARY KEY,
  lock_id BIGINT NOT NULL,
  lockable_type TEXT NOT NULL,
  lockable_id BIGINT NOT NULL,
  case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
  actor_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
  holder_id BIGINT NOT NULL,
  action TEXT NOT NULL,
  at TIMESTAMP NOT NULL
);
CREATE INDEX index_lock_events_on_case_id_and_id ON lock_events (case_id, id);

CREATE TABLE presences (
  id BIGSERIAL PRIMARY KEY,
  session_id TEXT NOT NULL,
  user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
  instance_id TEXT NOT NULL,
  user_agent TEXT,
  connected_at TIMESTAMP NOT NULL,
  last_seen_at TIMESTAMP NOT NULL
);
CREATE INDEX index_presences_on_case_id ON presences (case_id);
CREATE INDEX index_presences_on_session_id ON presences (session_id);
CREATE INDEX index_presences_on_last_seen_at ON presences (last_seen_at);
