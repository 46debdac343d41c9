CREATE TABLE pages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  title TEXT NOT NULL,
  version BIGINT NOT NULL DEFAULT 1,
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL
);
CREATE INDEX index_pages_on_case_id ON pages (case_id);
CREATE TABLE cards (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
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
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
  slug TEXT NOT NULL,
  caption TEXT NOT NULL,
  content TEXT NOT NULL,
  version BIGINT NOT NULL DEFAULT 1,
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL,
  UNIQUE (case_id, slug)
);
INSERT INTO pages (id, case_id, position, title, version, created_at, updated_at)
SELECT id, case_id, COALESCE(position, 0), COALESCE(json_extract(fields, '$.title'), ''), version, created_at, updated_at FROM records WHERE record_type = 'Page';
INSERT INTO cards (id, case_id, page_id, position, content, version, created_at, updated_at)
SELECT id, case_id, parent_id, COALESCE(position, 0), COALESCE(json_extract(fields, '$.content'), ''), version, created_at, updated_at FROM records WHERE record_type = 'Card';
INSERT INTO edgenotes (id, case_id, slug, caption, content, version, created_at, updated_at)
SELECT id, case_id, json_extract(fields, '$.slug'), json_extract(fields, '$.caption'), COALESCE(json_extract(fields, '$.content'), ''), version, created_at, updated_at FROM records WHERE record_type = 'Edgenote';
DROP TABLE record_ids;
DROP TABLE records;
