-- Users a team's own backend provisions (POST /auth/tokens) are found by
-- its id for them, `external_id`, and may have no email.
ALTER TABLE users ALTER COLUMN email DROP NOT NULL;
ALTER TABLE users ADD COLUMN external_id TEXT UNIQUE;
