-- Records of external types (`store = "external"`) live in the host's
-- database; baton only names them: (type, case, param). Each gets an id
-- here the first time it is locked, so that locks, lines and the audit
-- trail treat it as any record. The param is also kept on its locks and
-- waiters, which render it.
CREATE TABLE external_records (
  id BIGSERIAL PRIMARY KEY,
  record_type TEXT NOT NULL,
  case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
  param TEXT NOT NULL,
  created_at TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX index_external_records_on_name ON external_records (record_type, case_id, param);
CREATE INDEX index_external_records_on_case_id ON external_records (case_id);
ALTER TABLE locks ADD COLUMN lockable_param TEXT;
ALTER TABLE lock_waiters ADD COLUMN lockable_param TEXT;
