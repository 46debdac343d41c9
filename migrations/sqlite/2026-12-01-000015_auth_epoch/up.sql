-- The auth epoch of PostgreSQL's lock fast path (see its migration of the
-- same name): one row whose number triggers move whenever someone's access
-- could end or narrow. SQLite has no fast path, so nothing reads the row
-- here and no trigger moves it; the table exists so that both backends
-- define the same schema.
CREATE TABLE auth_epoch (
    id BOOLEAN NOT NULL PRIMARY KEY DEFAULT 1 CHECK (id),
    epoch BIGINT NOT NULL
);
INSERT INTO auth_epoch (id, epoch) VALUES (1, 1);
