-- Records of declared types (the schema file) live in one table: a record
-- is (record_type, id), its declared fields one JSON object. Ids are per
-- type, so the casebook's ids carry over (card 1 stays card 1), and
-- record_ids hands out the next one: never an id used before, as
-- AUTOINCREMENT did for the old tables.
CREATE TABLE records (
  record_type TEXT NOT NULL,
  id BIGINT NOT NULL,
  case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
  parent_type TEXT,
  parent_id BIGINT,
  position INTEGER,
  fields TEXT NOT NULL,
  version BIGINT NOT NULL DEFAULT 1,
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL,
  PRIMARY KEY (record_type, id)
);
CREATE INDEX index_records_on_case_id ON records (case_id, record_type);
CREATE INDEX index_records_on_parent ON records (parent_type, parent_id);

CREATE TABLE record_ids (
  record_type TEXT PRIMARY KEY NOT NULL,
  last_id BIGINT NOT NULL
);

-- The casebook's tables, carried over with their ids, versions and times.
INSERT INTO records (record_type, id, case_id, parent_type, parent_id, position, fields, version, created_at, updated_at)
SELECT 'Page', id, case_id, NULL, NULL, position, json_object('title', title), version, created_at, updated_at FROM pages;
INSERT INTO records (record_type, id, case_id, parent_type, parent_id, position, fields, version, created_at, updated_at)
SELECT 'Card', id, case_id, 'Page', page_id, position, json_object('content', content), version, created_at, updated_at FROM cards;
INSERT INTO records (record_type, id, case_id, parent_type, parent_id, position, fields, version, created_at, updated_at)
SELECT 'Edgenote', id, case_id, NULL, NULL, NULL, json_object('slug', slug, 'caption', caption, 'content', content), version, created_at, updated_at FROM edgenotes;
INSERT INTO record_ids (record_type, last_id)
SELECT CASE name WHEN 'pages' THEN 'Page' WHEN 'cards' THEN 'Card' ELSE 'Edgenote' END, seq
FROM sqlite_sequence WHERE name IN ('pages', 'cards', 'edgenotes');

DROP TABLE cards;
DROP TABLE edgenotes;
DROP TABLE pages;
