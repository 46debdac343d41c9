-- Who made a case: 'person' (POST /cases, the demo) or 'host' (a team's
-- backend through POST /auth/tokens). NULL: made before this column, by either.
ALTER TABLE cases ADD COLUMN made_by TEXT;
