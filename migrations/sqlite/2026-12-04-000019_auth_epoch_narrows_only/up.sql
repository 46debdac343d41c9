-- PostgreSQL's migration of the same name changes which writes move the
-- auth epoch; SQLite has no fast path and no such triggers. Nothing to do
-- here but keep the two backends' versions alike.
SELECT 1;
