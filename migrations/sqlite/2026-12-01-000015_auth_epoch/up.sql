-- PostgreSQL's fast path checks callers from memory against an auth epoch
-- (see its migration of the same name). SQLite has no fast path: nothing
-- to keep. The version exists on both backends so that both list the same
-- migrations.
SELECT 1;
