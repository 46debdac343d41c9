-- PostgreSQL's seed of record_ids took unused sequences as used (see its
-- migration of the same name). SQLite's came from sqlite_sequence, which
-- holds only tables that had rows: nothing to fix. The version exists on
-- both backends so that both list the same migrations.
SELECT 1;
