//! The SQLite and PostgreSQL migrations define the same tables, columns (with
//! their nullability) and indexes (with their columns and uniqueness): one
//! code base over both only works while they agree.

mod common;

use std::collections::BTreeSet;

use baton::db::DbConn;
use common::{Backend, TestDb};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Text};

/// `(table, column, nullable)`.
type Columns = BTreeSet<(String, String, bool)>;
/// `(table, columns in order, unique)`; primary keys left out.
type Indexes = BTreeSet<(String, Vec<String>, bool)>;

#[derive(QueryableByName)]
struct ColumnRow {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Text)]
    column_name: String,
    #[diesel(sql_type = Bool)]
    nullable: bool,
}

#[derive(QueryableByName)]
struct IndexRow {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Text)]
    index_name: String,
    #[diesel(sql_type = Bool)]
    is_unique: bool,
    #[diesel(sql_type = BigInt)]
    seqno: i64,
    #[diesel(sql_type = Text)]
    column_name: String,
}

const SQLITE_COLUMNS: &str = "
    SELECT m.name AS table_name, p.name AS column_name,
           (p.\"notnull\" = 0 AND p.pk = 0) AS nullable
    FROM sqlite_master m, pragma_table_info(m.name) p
    WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'
      AND m.name != '__diesel_schema_migrations'";

const SQLITE_INDEXES: &str = "
    SELECT m.name AS table_name, il.name AS index_name, il.\"unique\" = 1 AS is_unique,
           ii.seqno AS seqno, ii.name AS column_name
    FROM sqlite_master m, pragma_index_list(m.name) il, pragma_index_info(il.name) ii
    WHERE m.type = 'table' AND il.origin != 'pk'
      AND m.name != '__diesel_schema_migrations'";

const POSTGRES_COLUMNS: &str = "
    SELECT table_name::text AS table_name, column_name::text AS column_name,
           is_nullable = 'YES' AS nullable
    FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name != '__diesel_schema_migrations'";

const POSTGRES_INDEXES: &str = "
    SELECT t.relname::text AS table_name, i.relname::text AS index_name,
           ix.indisunique AS is_unique, k.ord AS seqno, a.attname::text AS column_name
    FROM pg_index ix
    JOIN pg_class t ON t.oid = ix.indrelid
    JOIN pg_class i ON i.oid = ix.indexrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
    CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord)
    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
    WHERE n.nspname = 'public' AND NOT ix.indisprimary
      AND t.relname != '__diesel_schema_migrations'";

fn shape(conn: &mut DbConn, backend: Backend) -> (Columns, Indexes) {
    let (columns_sql, indexes_sql) = match backend {
        Backend::Sqlite => (SQLITE_COLUMNS, SQLITE_INDEXES),
        Backend::Postgres => (POSTGRES_COLUMNS, POSTGRES_INDEXES),
    };
    let columns = diesel::sql_query(columns_sql)
        .load::<ColumnRow>(conn)
        .expect("read columns")
        .into_iter()
        .map(|c| (c.table_name, c.column_name, c.nullable))
        .collect();
    let mut rows = diesel::sql_query(indexes_sql)
        .load::<IndexRow>(conn)
        .expect("read indexes");
    rows.sort_by(|a, b| (&a.index_name, a.seqno).cmp(&(&b.index_name, b.seqno)));
    let mut indexes = std::collections::BTreeMap::<String, (String, Vec<String>, bool)>::new();
    for row in rows {
        indexes
            .entry(row.index_name)
            .or_insert_with(|| (row.table_name, Vec::new(), row.is_unique))
            .1
            .push(row.column_name);
    }
    (columns, indexes.into_values().collect())
}

fn migrated(backend: Backend) -> Option<(TestDb, DbConn)> {
    let (db, url) = TestDb::create(backend)?;
    let mut conn = baton::db::connect(&url).expect("connect");
    baton::db::migrate(&mut conn).expect("migrate");
    Some((db, conn))
}

#[test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
fn sqlite_and_postgres_migrations_define_the_same_schema() {
    let (_sqlite_db, mut sqlite) = migrated(Backend::Sqlite).expect("sqlite");
    let (_pg_db, mut pg) = migrated(Backend::Postgres).expect("BATON_TEST_POSTGRES_URL");
    let (sqlite_columns, sqlite_indexes) = shape(&mut sqlite, Backend::Sqlite);
    let (pg_columns, pg_indexes) = shape(&mut pg, Backend::Postgres);
    assert!(
        sqlite_columns.len() > 40,
        "too few columns read: {sqlite_columns:?}"
    );
    assert!(
        sqlite_indexes.len() > 10,
        "too few indexes read: {sqlite_indexes:?}"
    );
    let only = |a: &Columns, b: &Columns| a.difference(b).cloned().collect::<Vec<_>>();
    assert!(
        sqlite_columns == pg_columns,
        "columns differ; only in SQLite: {:?}; only in PostgreSQL: {:?}",
        only(&sqlite_columns, &pg_columns),
        only(&pg_columns, &sqlite_columns)
    );
    let only = |a: &Indexes, b: &Indexes| a.difference(b).cloned().collect::<Vec<_>>();
    assert!(
        sqlite_indexes == pg_indexes,
        "indexes differ; only in SQLite: {:?}; only in PostgreSQL: {:?}",
        only(&sqlite_indexes, &pg_indexes),
        only(&pg_indexes, &sqlite_indexes)
    );
}
