-- Records of declared types (the schema file) live in one table: a record
-- is (record_type, id), its declared fields one JSON object (text: the one
-- column type both backends read the same way). Ids are per type, so the
-- casebook's ids carry over (card 1 stays card 1), and record_ids hands
-- out the next one: never an id used before, as the old sequences did.
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
  record_type TEXT PRIMARY KEY,
  last_id BIGINT NOT NULL
);

-- The casebook's tables, carried over with their ids, versions and times.
INSERT INTO records (record_type, id, case_id, parent_type, parent_id, position, fields, version, created_at, updated_at)
SELECT 'Page', id, case_id, NULL, NULL, position, json_build_object('title', title)::text, version, created_at, updated_at FROM pages;
INSERT INTO records (record_type, id, case_id, parent_type, parent_id, position, fields, version, created_at, updated_at)
SELECT 'Card', id, case_id, 'Page', page_id, position, json_build_object('content', content)::text, version, created_at, updated_at FROM cards;
INSERT INTO records (record_type, id, case_id, parent_type, parent_id, position, fields, version, created_at, updated_at)
SELECT 'Edgenote', id, case_id, NULL, NULL, NULL, json_build_object('slug', slug, 'caption', caption, 'content', content)::text, version, created_at, updated_at FROM edgenotes;
INSERT INTO record_ids (record_type, last_id) SELECT 'Page', last_value FROM pages_id_seq;
INSERT INTO record_ids (record_type, last_id) SELECT 'Card', last_value FROM cards_id_seq;
INSERT INTO record_ids (record_type, last_id) SELECT 'Edgenote', last_value FROM edgenotes_id_seq;

-- The card-only save function restated the guard in PL/pgSQL; the fast
-- save is now built at start from the same fragments as every other lock
-- statement, for every declared type.
DROP FUNCTION IF EXISTS baton_fast_card_update(BIGINT, BIGINT, BIGINT, TEXT, BIGINT, BIGINT, TEXT, INTEGER, BIGINT, BIGINT, TEXT[]);
DROP TABLE cards;
DROP TABLE edgenotes;
DROP TABLE pages;
