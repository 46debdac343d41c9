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

// ---- An existing casebook database carried over into `records` ----

use std::collections::BTreeMap;
use std::net::TcpListener;

use baton::db::schema::{events, lock_waiters, locks, record_ids, records};
use chrono::NaiveDateTime;
use diesel::connection::SimpleConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use serde_json::{json, Value};

const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");
const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");
/// The migration that moves pages, cards and edgenotes into `records`.
const RECORDS_MIGRATION: &str = "declared_records";

/// Runs every migration before [`RECORDS_MIGRATION`]; how many ran.
fn migrate_to_before_records(conn: &mut DbConn) -> usize {
    migrate_to_before(conn, RECORDS_MIGRATION)
}

/// Runs every migration before the one whose name contains `name`; how
/// many ran.
fn migrate_to_before(conn: &mut DbConn, name: &'static str) -> usize {
    fn run<DB: diesel::backend::Backend>(
        conn: &mut impl MigrationHarness<DB>,
        source: fn() -> EmbeddedMigrations,
        name: &str,
    ) -> usize {
        let mut ran = 0;
        loop {
            let pending = conn
                .pending_migrations(source())
                .expect("pending migrations");
            let next = pending
                .first()
                .unwrap_or_else(|| panic!("no pending migration is {name}"));
            if next.name().to_string().contains(name) {
                return ran;
            }
            conn.run_migration(next.as_ref()).expect("run a migration");
            ran += 1;
        }
    }
    match conn {
        DbConn::Postgresql(c) => run(c, || POSTGRES_MIGRATIONS, name),
        DbConn::Sqlite(c) => run(c, || SQLITE_MIGRATIONS, name),
    }
}

/// A card's content that JSON must escape.
const AWKWARD: &str = "She said \"stop\" \\ then left.\nNext line: naïve café — ✓ 'quoted'";

/// Session ids of the old lock's and the old waiter's tabs.
const ALICE_TAB: &str = "6a1f6a3c-0d55-4c2a-9b54-1f8f5c1d2e01";
const BOB_TAB: &str = "0b7e2f1a-93c4-4d6e-8f21-7a5b3c9d4e02";

/// One record as the old tables held it, and as `records` must hold it.
#[derive(Debug, Clone, PartialEq)]
struct Expected {
    record_type: &'static str,
    id: i64,
    case_id: i64,
    parent: Option<(&'static str, i64)>,
    position: Option<i32>,
    fields: Value,
    version: i64,
    created_at: NaiveDateTime,
    updated_at: NaiveDateTime,
}

/// The lock, waiter and audit rows, as stored.
type LockRow = (
    (i64, String, i64, i64, i64, Option<String>, Option<String>),
    (
        NaiveDateTime,
        NaiveDateTime,
        NaiveDateTime,
        Option<NaiveDateTime>,
        bool,
        bool,
    ),
);
type WaiterRow = (
    i64,
    String,
    i64,
    i64,
    i64,
    String,
    Option<String>,
    NaiveDateTime,
    NaiveDateTime,
    Option<NaiveDateTime>,
);
type EventRow = (
    i64,
    i64,
    String,
    i64,
    i64,
    Option<i64>,
    i64,
    String,
    NaiveDateTime,
);

#[derive(Debug, PartialEq)]
struct LockState {
    locks: Vec<LockRow>,
    waiters: Vec<WaiterRow>,
    audit: Vec<EventRow>,
}

fn lock_state(conn: &mut DbConn) -> LockState {
    LockState {
        locks: locks::table
            .order(locks::id)
            .select((
                (
                    locks::id,
                    locks::lockable_type,
                    locks::lockable_id,
                    locks::case_id,
                    locks::user_id,
                    locks::session_id,
                    locks::user_agent,
                ),
                (
                    locks::created_at,
                    locks::expires_at,
                    locks::last_activity_at,
                    locks::disconnected_at,
                    locks::has_waiters,
                    locks::deep,
                ),
            ))
            .load(conn)
            .expect("read locks"),
        waiters: lock_waiters::table
            .order(lock_waiters::id)
            .select((
                lock_waiters::id,
                lock_waiters::lockable_type,
                lock_waiters::lockable_id,
                lock_waiters::case_id,
                lock_waiters::user_id,
                lock_waiters::session_id,
                lock_waiters::user_agent,
                lock_waiters::created_at,
                lock_waiters::expires_at,
                lock_waiters::disconnected_at,
            ))
            .load(conn)
            .expect("read waiters"),
        audit: audit_rows(conn),
    }
}

/// The audit table before the event stream (migration 000009).
mod before_the_stream {
    diesel::table! {
        lock_events (id) {
            id -> BigInt,
            lock_id -> BigInt,
            lockable_type -> Text,
            lockable_id -> BigInt,
            case_id -> BigInt,
            actor_id -> Nullable<BigInt>,
            holder_id -> BigInt,
            action -> Text,
            at -> Timestamp,
        }
    }
}

/// The audit trail, wherever the database's version keeps it: the rows of
/// the event stream with an action, or the old `lock_events`.
fn audit_rows(conn: &mut DbConn) -> Vec<EventRow> {
    use before_the_stream::lock_events;
    let streamed = events::table
        .filter(events::action.is_not_null())
        .order(events::id)
        .select((
            events::id,
            events::lock_id.assume_not_null(),
            events::lockable_type.assume_not_null(),
            events::lockable_id.assume_not_null(),
            events::case_id.assume_not_null(),
            events::actor_id,
            events::holder_id.assume_not_null(),
            events::action.assume_not_null(),
            events::at,
        ))
        .load(conn);
    match streamed {
        Ok(rows) => rows,
        Err(_) => lock_events::table
            .order(lock_events::id)
            .load(conn)
            .expect("read audit"),
    }
}

/// A casebook database as the last release left it.
struct OldCasebook {
    url: String,
    records: Vec<Expected>,
    /// The highest card id ever handed out (that card was deleted).
    last_card_id: i64,
    locks: LockState,
    _db: TestDb,
}

fn sql_time(t: NaiveDateTime) -> String {
    t.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
}

fn sql_text(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Builds a casebook database at the migration before the records table:
/// Alice (manager) and Bob (editor) on case `old-case`, a second case,
/// pages, cards and edgenotes with their own versions and times, a card
/// created and deleted (the highest card id), Alice's lock on card 1 with
/// its audit row, and Bob waiting for it. Then migrates to the end.
fn old_casebook(backend: Backend) -> Option<OldCasebook> {
    old_casebook_with_slugs(backend, "map", "interview")
}

/// [`old_casebook`] with these slugs for the edgenotes of the two cases.
fn old_casebook_with_slugs(backend: Backend, first: &str, second: &str) -> Option<OldCasebook> {
    let (db, url) = TestDb::create(backend)?;
    let mut conn = baton::db::connect(&url).expect("connect");
    assert_eq!(
        migrate_to_before_records(&mut conn),
        7,
        "the migrations before {RECORDS_MIGRATION}"
    );

    let now = chrono::Utc::now().naive_utc();
    // Times as the database stores them (microseconds).
    let now = NaiveDateTime::parse_from_str(&sql_time(now), "%Y-%m-%d %H:%M:%S%.f").unwrap();
    let day = |d: i64| now - chrono::Duration::days(d);
    let in_an_hour = now + chrono::Duration::hours(1);
    let t = sql_time;

    let mut sql = String::new();
    for (email, name) in [("alice@example.com", "Alice"), ("bob@example.com", "Bob")] {
        sql.push_str(&format!(
            "INSERT INTO users (email, name, password_hash, color, admin, created_at, updated_at) \
             VALUES ('{email}', '{name}', 'not-a-hash', '#336699', FALSE, '{}', '{}');\n",
            t(day(30)),
            t(day(30))
        ));
    }
    for slug in ["old-case", "other-case"] {
        sql.push_str(&format!(
            "INSERT INTO cases (slug, title, version, created_at, updated_at) \
             VALUES ('{slug}', 'Title of {slug}', 2, '{}', '{}');\n",
            t(day(20)),
            t(day(10))
        ));
    }
    sql.push_str(&format!(
        "INSERT INTO memberships (case_id, user_id, role, created_at, updated_at) \
         VALUES (1, 1, 'manager', '{0}', '{0}'), (1, 2, 'editor', '{0}', '{0}');\n",
        t(day(20))
    ));

    let mut expected = Vec::new();
    // (id, case, position, title, version)
    for (id, case_id, position, title, version) in [
        (1, 1, 0, "Introduction", 3),
        (2, 1, 1, "The decision", 1),
        (3, 2, 0, "Elsewhere", 5),
    ] {
        let (created, updated) = (day(19) + chrono::Duration::seconds(id), day(id));
        sql.push_str(&format!(
            "INSERT INTO pages (case_id, position, title, version, created_at, updated_at) \
             VALUES ({case_id}, {position}, {}, {version}, '{}', '{}');\n",
            sql_text(title),
            t(created),
            t(updated)
        ));
        expected.push(Expected {
            record_type: "Page",
            id,
            case_id,
            parent: None,
            position: Some(position),
            fields: json!({ "title": title }),
            version,
            created_at: created,
            updated_at: updated,
        });
    }
    // (id, case, page, position, content, version)
    let cards = [
        (1, 1, 1, 0, AWKWARD, 7),
        (2, 1, 1, 1, "Second card", 1),
        (3, 1, 2, 0, "", 2),
        (4, 2, 3, 0, "In the other case", 4),
        (5, 1, 2, 1, "Deleted before the upgrade", 1),
    ];
    for (id, case_id, page_id, position, content, version) in cards {
        let (created, updated) = (day(18) + chrono::Duration::seconds(id), day(id));
        sql.push_str(&format!(
            "INSERT INTO cards (case_id, page_id, position, content, version, created_at, updated_at) \
             VALUES ({case_id}, {page_id}, {position}, {}, {version}, '{}', '{}');\n",
            sql_text(content),
            t(created),
            t(updated)
        ));
        if id != 5 {
            expected.push(Expected {
                record_type: "Card",
                id,
                case_id,
                parent: Some(("Page", page_id)),
                position: Some(position),
                fields: json!({ "content": content }),
                version,
                created_at: created,
                updated_at: updated,
            });
        }
    }
    sql.push_str("DELETE FROM cards WHERE id = 5;\n");
    // (id, case, slug, caption, content, version)
    for (id, case_id, slug, caption, content, version) in [
        (1, 1, first, "A map", "https://example.com/map.png", 2),
        (2, 2, second, "An interview", "", 1),
    ] {
        let (created, updated) = (day(17) + chrono::Duration::seconds(id), day(id));
        sql.push_str(&format!(
            "INSERT INTO edgenotes (case_id, slug, caption, content, version, created_at, updated_at) \
             VALUES ({case_id}, '{slug}', '{caption}', '{content}', {version}, '{}', '{}');\n",
            t(created),
            t(updated)
        ));
        expected.push(Expected {
            record_type: "Edgenote",
            id,
            case_id,
            parent: None,
            position: None,
            fields: json!({ "slug": slug, "caption": caption, "content": content }),
            version,
            created_at: created,
            updated_at: updated,
        });
    }
    // Alice holds card 1 (from her tab), with its audit row; Bob waits.
    // She also holds page 2 with everything on it (a deep lock).
    sql.push_str(&format!(
        "INSERT INTO locks (lockable_type, lockable_id, case_id, user_id, session_id, user_agent, \
           created_at, expires_at, last_activity_at, disconnected_at, has_waiters, deep) \
         VALUES ('Card', 1, 1, 1, '{ALICE_TAB}', 'old browser', '{0}', '{1}', '{0}', NULL, TRUE, FALSE);\n\
         INSERT INTO lock_events (lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, action, at) \
         VALUES (1, 'Card', 1, 1, 1, 1, 'acquired', '{0}');\n\
         INSERT INTO lock_waiters (lockable_type, lockable_id, case_id, user_id, session_id, user_agent, \
           created_at, expires_at, disconnected_at) \
         VALUES ('Card', 1, 1, 2, '{BOB_TAB}', NULL, '{0}', '{1}', NULL);\n\
         INSERT INTO locks (lockable_type, lockable_id, case_id, user_id, session_id, user_agent, \
           created_at, expires_at, last_activity_at, disconnected_at, has_waiters, deep) \
         VALUES ('Page', 2, 1, 1, '{ALICE_TAB}', NULL, '{0}', '{1}', '{0}', NULL, FALSE, TRUE);\n\
         INSERT INTO lock_events (lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, action, at) \
         VALUES (2, 'Page', 2, 1, 1, 1, 'acquired', '{0}');\n",
        t(now),
        t(in_an_hour)
    ));
    conn.batch_execute(&sql).expect("fill the old tables");

    let locks_before = lock_state(&mut conn);
    assert_eq!(locks_before.locks.len(), 2);
    assert_eq!(locks_before.waiters.len(), 1);
    assert_eq!(locks_before.audit.len(), 2);
    baton::db::migrate(&mut conn).expect("migrate the rest");
    Some(OldCasebook {
        url,
        records: expected,
        last_card_id: 5,
        locks: locks_before,
        _db: db,
    })
}

type RecordRow = (
    String,
    i64,
    i64,
    Option<String>,
    Option<i64>,
    Option<i32>,
    String,
    i64,
    NaiveDateTime,
    NaiveDateTime,
);

on_both_backends!(|backend| async move { old_casebook(backend) } =>
    record_ids_hold_the_last_id_ever_used_of_each_type,
    locks_lines_and_audit_are_untouched_by_the_move,
);
on_both_backends!(|backend| async move { old_casebook_with_slugs(backend, "map", "map") } =>
    the_same_edgenote_slug_in_two_old_cases_still_starts,
);
on_both_backends!(
    old_pages_cards_and_edgenotes_become_records_with_ids_versions_and_fields,
    the_server_serves_and_guards_a_carried_over_card,
);

async fn old_pages_cards_and_edgenotes_become_records_with_ids_versions_and_fields(
    backend: Backend,
) {
    let Some(old) = old_casebook(backend) else {
        return;
    };
    let mut conn = baton::db::connect(&old.url).expect("connect");
    let rows: Vec<RecordRow> = records::table
        .order((records::record_type, records::id))
        .load(&mut conn)
        .expect("read records");
    let mut found: BTreeMap<(String, i64), Expected> = BTreeMap::new();
    for (record_type, id, case_id, parent_type, parent_id, position, fields, version, c, u) in rows
    {
        let parent = match (parent_type.as_deref(), parent_id) {
            (None, None) => None,
            (Some("Page"), Some(id)) => Some(("Page", id)),
            other => panic!("{record_type} {id} has parent {other:?}"),
        };
        let fields: Value = serde_json::from_str(&fields)
            .unwrap_or_else(|e| panic!("{record_type} {id}: fields are not JSON ({e}): {fields}"));
        let record_type: &'static str = match record_type.as_str() {
            "Page" => "Page",
            "Card" => "Card",
            "Edgenote" => "Edgenote",
            other => panic!("unexpected record type {other}"),
        };
        found.insert(
            (record_type.to_owned(), id),
            Expected {
                record_type,
                id,
                case_id,
                parent,
                position,
                fields,
                version,
                created_at: c,
                updated_at: u,
            },
        );
    }
    let expected: BTreeMap<(String, i64), Expected> = old
        .records
        .iter()
        .map(|e| ((e.record_type.to_owned(), e.id), e.clone()))
        .collect();
    assert_eq!(
        found.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "the records are not the old rows"
    );
    for (key, want) in &expected {
        assert_eq!(&found[key], want, "{key:?} was not carried over as it was");
    }
    // The old tables are gone.
    for table in ["pages", "cards", "edgenotes"] {
        let gone = conn.batch_execute(&format!("SELECT 1 FROM {table}"));
        assert!(gone.is_err(), "table {table} is still there");
    }
}

async fn record_ids_hold_the_last_id_ever_used_of_each_type(old: OldCasebook) {
    let mut conn = baton::db::connect(&old.url).expect("connect");
    let ids: BTreeMap<String, i64> = record_ids::table
        .load::<(String, i64)>(&mut conn)
        .expect("read record_ids")
        .into_iter()
        .collect();
    let want: BTreeMap<String, i64> = [
        ("Card".to_owned(), old.last_card_id),
        ("Edgenote".to_owned(), 2),
        ("Page".to_owned(), 3),
    ]
    .into_iter()
    .collect();
    assert_eq!(ids, want);
}

async fn locks_lines_and_audit_are_untouched_by_the_move(old: OldCasebook) {
    let mut conn = baton::db::connect(&old.url).expect("connect");
    assert_eq!(lock_state(&mut conn), old.locks);
}

/// A server on the upgraded database, started as `baton serve` starts it.
struct Served {
    base: String,
    http: reqwest::Client,
    state: baton::state::AppState,
    server: actix_web::dev::ServerHandle,
}

impl Served {
    async fn start(url: &str) -> Served {
        let state = baton::server::build_state(common::test_settings(url), common::SECRET)
            .expect("the upgraded database starts");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = baton::server::start(state.clone(), listener).expect("start");
        let handle = server.handle();
        actix_web::rt::spawn(server);
        Served {
            base,
            http: reqwest::Client::new(),
            state,
            server: handle,
        }
    }

    /// A token for an old user.
    async fn token(&self, user_id: i64) -> String {
        let jwt = self.state.jwt.clone();
        self.state
            .db
            .write(None, move |tx| {
                baton::auth::tokens::issue(tx.conn, &jwt, baton::models::UserId(user_id), tx.now)
            })
            .await
            .expect("issue a token")
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> (u16, Option<String>, Value) {
        let response = request
            .timeout(std::time::Duration::from_secs(30))
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        let etag = response
            .headers()
            .get("etag")
            .map(|v| v.to_str().unwrap().to_owned());
        let text = response.text().await.expect("body");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({status}): {text}"))
        };
        (status, etag, body)
    }

    fn at(&self, method: reqwest::Method, path: &str, token: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(token)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let handle = self.server.clone();
        actix_web::rt::spawn(async move { handle.stop(false).await });
    }
}

async fn the_server_serves_and_guards_a_carried_over_card(backend: Backend) {
    use reqwest::Method;
    let Some(old) = old_casebook(backend) else {
        return;
    };
    let served = Served::start(&old.url).await;
    let alice = served.token(1).await;
    let bob = served.token(2).await;

    // The old card, with its version as ETag.
    let (status, etag, card) = served
        .send(served.at(Method::GET, "/cards/1", &alice))
        .await;
    assert_eq!(status, 200, "{card}");
    assert_eq!(etag.as_deref(), Some("\"7\""));
    assert_eq!(card["type"], "Card");
    assert_eq!(card["id"], 1);
    assert_eq!(card["version"], 7);
    assert_eq!(card["content"], AWKWARD);
    assert_eq!(card["pageId"], 1);
    assert_eq!(card["caseId"], 1);
    assert_eq!(card["position"], 0);

    // The case nests the old pages and cards in order.
    let (status, _, case) = served
        .send(served.at(Method::GET, "/cases/old-case", &alice))
        .await;
    assert_eq!(status, 200, "{case}");
    let pages: Vec<(i64, Vec<i64>)> = case["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .map(|p| {
            let cards = p["cards"].as_array().expect("cards");
            (
                p["id"].as_i64().unwrap(),
                cards.iter().map(|c| c["id"].as_i64().unwrap()).collect(),
            )
        })
        .collect();
    assert_eq!(pages, [(1, vec![1, 2]), (2, vec![3])]);
    assert_eq!(case["edgenotes"][0]["slug"], "map");
    let active: Vec<i64> = case["activeLocks"]
        .as_array()
        .expect("activeLocks")
        .iter()
        .map(|l| l["id"].as_i64().unwrap())
        .collect();
    assert_eq!(active, [1, 2], "the old locks are not active: {case}");

    // The old lock still guards the card: Bob's save is refused.
    let (status, _, refused) = served
        .send(
            served
                .at(Method::PATCH, "/cards/1", &bob)
                .header("X-Session-ID", BOB_TAB)
                .json(&json!({ "card": { "content": "Bob's words" } })),
        )
        .await;
    assert_eq!(status, 423, "{refused}");
    assert_eq!(refused["error"]["lock"]["id"], 1, "{refused}");

    // The old deep lock covers page 2's card.
    let (status, _, refused) = served
        .send(
            served
                .at(Method::PATCH, "/cards/3", &bob)
                .header("X-Session-ID", BOB_TAB)
                .json(&json!({ "card": { "content": "Bob's words" } })),
        )
        .await;
    assert_eq!(status, 423, "{refused}");
    assert_eq!(refused["error"]["lock"]["id"], 2, "{refused}");

    // Alice saves from her tab with her old lock and the old version.
    let (status, etag, saved) = served
        .send(
            served
                .at(Method::PATCH, "/cards/1", &alice)
                .header("X-Session-ID", ALICE_TAB)
                .header("Lock-Token", "1")
                .header("If-Match", "\"7\"")
                .json(&json!({ "card": { "content": "Alice's words" } })),
        )
        .await;
    assert_eq!(status, 200, "{saved}");
    assert_eq!(saved["version"], 8);
    assert_eq!(etag.as_deref(), Some("\"8\""));

    // A new card gets an id no card ever had.
    let (status, _, created) = served
        .send(
            served
                .at(Method::POST, "/pages/1/cards", &alice)
                .json(&json!({ "card": { "content": "After the upgrade" } })),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let new_id = created["id"].as_i64().unwrap();
    assert!(
        new_id > old.last_card_id,
        "new card {new_id} reuses an id up to {}",
        old.last_card_id
    );

    // Releasing hands the card to Bob, who waited in the old line.
    let (status, _, released) = served
        .send(
            served
                .at(Method::DELETE, "/locks/1", &alice)
                .header("X-Session-ID", ALICE_TAB),
        )
        .await;
    assert_eq!(status, 204, "{released}");
    let mut conn = baton::db::connect(&old.url).expect("connect");
    let held: Vec<(i64, String, i64, i64)> = locks::table
        .filter(locks::lockable_type.eq("Card"))
        .select((
            locks::user_id,
            locks::lockable_type,
            locks::lockable_id,
            locks::id,
        ))
        .load(&mut conn)
        .expect("read locks");
    assert_eq!(held.len(), 1, "{held:?}");
    let (holder, lockable_type, lockable_id, lock_id) = held[0].clone();
    assert_eq!(
        (holder, lockable_type.as_str(), lockable_id),
        (2, "Card", 1)
    );
    assert!(lock_id > 1, "the hand-off reused lock id {lock_id}");
    let line: i64 = lock_waiters::table
        .count()
        .get_result(&mut conn)
        .expect("read waiters");
    assert_eq!(line, 0, "Bob is still in line");
}

/// Slugs are unique per case: an old database where two cases each have an
/// edgenote `map` is a valid casebook and must still start.
async fn the_same_edgenote_slug_in_two_old_cases_still_starts(old: OldCasebook) {
    let served = Served::start(&old.url).await;
    let alice = served.token(1).await;
    let (status, _, note) = served
        .send(served.at(reqwest::Method::GET, "/edgenotes/1", &alice))
        .await;
    assert_eq!(status, 200, "{note}");
    assert_eq!(note["slug"], "map");
}

on_both_backends!(|backend| async move { TestDb::create(backend) } =>
    the_event_stream_never_reuses_an_audit_id,
);

/// The audit trail moves into the event stream with its ids, and the next
/// event's id is above every id the old table ever handed out, the ids of
/// deleted rows included.
async fn the_event_stream_never_reuses_an_audit_id((_db, url): (TestDb, String)) {
    let mut conn = baton::db::connect(&url).expect("connect");
    migrate_to_before(&mut conn, "one_event_stream");
    let now = sql_time(chrono::Utc::now().naive_utc());
    let mut sql = format!(
        "INSERT INTO users (email, name, password_hash, color, admin, created_at, updated_at) \
         VALUES ('a@example.com', 'A', 'not-a-hash', '#336699', FALSE, '{now}', '{now}');\n\
         INSERT INTO cases (slug, title, version, created_at, updated_at) \
         VALUES ('c', 'C', 1, '{now}', '{now}');\n"
    );
    for lock_id in 1..=4 {
        sql.push_str(&format!(
            "INSERT INTO lock_events (lock_id, lockable_type, lockable_id, case_id, actor_id, \
               holder_id, action, at) VALUES ({lock_id}, 'Card', 1, 1, 1, 1, 'acquired', '{now}');\n"
        ));
    }
    // The newest two rows go: ids 3 and 4 were handed out all the same.
    sql.push_str("DELETE FROM lock_events WHERE id > 2;\n");
    conn.batch_execute(&sql).expect("fill the audit trail");
    baton::db::migrate(&mut conn).expect("migrate the rest");

    let kept: Vec<i64> = events::table
        .select(events::id)
        .order(events::id)
        .load(&mut conn)
        .expect("read events");
    assert_eq!(kept, [1, 2], "the audit trail keeps its ids");
    diesel::sql_query(format!(
        "INSERT INTO events (at, payload) VALUES ('{now}', 'a frame')"
    ))
    .execute(&mut conn)
    .expect("write an event");
    let next: i64 = events::table
        .select(diesel::dsl::max(events::id))
        .get_result::<Option<i64>>(&mut conn)
        .expect("read events")
        .expect("a row");
    assert!(next > 4, "a new event reused id {next}");
}

on_both_backends!(|backend| async move { TestDb::create(backend) } =>
    users_keep_their_rows_ids_and_references_when_email_becomes_optional,
);

/// Migration 000011 lets a user have no email (SQLite rebuilds the table):
/// every user keeps its row and id, what refers to users still refers to
/// them (and still cascades), and ids go on above every id handed out.
async fn users_keep_their_rows_ids_and_references_when_email_becomes_optional(
    (_db, url): (TestDb, String),
) {
    let mut conn = baton::db::connect(&url).expect("connect");
    migrate_to_before(&mut conn, "external_users");
    let now = sql_time(chrono::Utc::now().naive_utc());
    let mut sql = format!(
        "INSERT INTO cases (slug, title, version, created_at, updated_at) \
         VALUES ('c', 'C', 1, '{now}', '{now}');\n"
    );
    for n in 1..=3 {
        sql.push_str(&format!(
            "INSERT INTO users (email, name, password_hash, color, admin, created_at, updated_at) \
             VALUES ('u{n}@example.com', 'U{n}', 'hash-{n}', '#336699', FALSE, '{now}', '{now}');\n\
             INSERT INTO memberships (case_id, user_id, role, created_at, updated_at) \
             VALUES (1, {n}, 'editor', '{now}', '{now}');\n"
        ));
    }
    // The newest user goes: id 3 was handed out all the same.
    sql.push_str("DELETE FROM users WHERE id = 3;\n");
    conn.batch_execute(&sql).expect("fill the old users");
    baton::db::migrate(&mut conn).expect("migrate the rest");

    let users: Vec<(i64, Option<String>, String)> = baton::db::schema::users::table
        .select((
            baton::db::schema::users::id,
            baton::db::schema::users::email,
            baton::db::schema::users::password_hash,
        ))
        .order(baton::db::schema::users::id)
        .load(&mut conn)
        .expect("read users");
    assert_eq!(
        users,
        [
            (1, Some("u1@example.com".to_owned()), "hash-1".to_owned()),
            (2, Some("u2@example.com".to_owned()), "hash-2".to_owned()),
        ]
    );
    let members: i64 = baton::db::schema::memberships::table
        .count()
        .get_result(&mut conn)
        .expect("count memberships");
    assert_eq!(members, 2, "the removed user's membership went with them");

    // Two users without an email; a new id above every old one.
    let provisioned = |external_id: &str| {
        format!(
            "INSERT INTO users (email, name, password_hash, color, admin, created_at, updated_at, external_id) \
             VALUES (NULL, 'P', '', '#336699', FALSE, '{now}', '{now}', '{external_id}')"
        )
    };
    diesel::sql_query(provisioned("p-1"))
        .execute(&mut conn)
        .expect("a user without an email");
    diesel::sql_query(provisioned("p-2"))
        .execute(&mut conn)
        .expect("another user without an email");
    assert!(
        diesel::sql_query(provisioned("p-2"))
            .execute(&mut conn)
            .is_err(),
        "an external id names one user"
    );
    let newest: Option<i64> = baton::db::schema::users::table
        .select(diesel::dsl::max(baton::db::schema::users::id))
        .get_result(&mut conn)
        .expect("read users");
    assert!(
        newest.is_some_and(|id| id > 3),
        "a new user reused an id: {newest:?}"
    );

    // References still hold: a membership of no user is refused, and
    // removing a user still removes their memberships.
    assert!(diesel::sql_query(format!(
        "INSERT INTO memberships (case_id, user_id, role, created_at, updated_at) \
         VALUES (1, 999, 'editor', '{now}', '{now}')"
    ))
    .execute(&mut conn)
    .is_err());
    diesel::sql_query("DELETE FROM users WHERE id = 1")
        .execute(&mut conn)
        .expect("remove a user");
    let members: i64 = baton::db::schema::memberships::table
        .count()
        .get_result(&mut conn)
        .expect("count memberships");
    assert_eq!(members, 1);
}

on_both_backends!(common::TestApp::start =>
    a_new_database_hands_out_record_ids_from_1,
);
on_both_backends!(the_first_ids_seeded_from_unused_sequences_are_given_back,);

/// Ids of every type start at 1 on a new database: the demo's card 1 is
/// card 1 on PostgreSQL as on SQLite.
async fn a_new_database_hands_out_record_ids_from_1(app: common::TestApp) {
    baton::demo::seed(&app.state.db, baton::demo::demo_data(None))
        .await
        .expect("seed the demo");
    let login = app
        .post("/auth/login")
        .json(json!({ "email": "alice@example.com", "password": baton::demo::DEMO_PASSWORD }))
        .send()
        .await
        .expect(200);
    let alice = common::TestUser {
        token: login.body["token"].as_str().expect("token").to_owned(),
        id: login.body["user"]["id"].as_i64().expect("user id"),
        email: "alice@example.com".to_owned(),
        session: None,
    };
    for path in ["/pages/1", "/cards/1", "/edgenotes/1"] {
        let found = app.get(path).by(&alice).send().await.expect(200);
        assert_eq!(found.body["id"], 1, "{path}: {}", found.body);
    }
    let case = app
        .get("/cases/sample-case")
        .by(&alice)
        .send()
        .await
        .expect(200);
    assert_eq!(case.body["pages"][0]["id"], 1, "{}", case.body);
    assert_eq!(case.body["pages"][0]["cards"][0]["id"], 1, "{}", case.body);
}

/// A PostgreSQL database migrated by 2026-11-26-000008 on a new database
/// seeded `record_ids` with 1 for types that never had a record (unused
/// sequences report 1); 2026-11-30-000014 gives those back, and only those.
async fn the_first_ids_seeded_from_unused_sequences_are_given_back(backend: Backend) {
    let Some((_db, url)) = TestDb::create(backend) else {
        return;
    };
    let mut conn = baton::db::connect(&url).expect("connect");
    migrate_to_before(&mut conn, "record_ids_from_one");
    let seeded: BTreeMap<String, i64> = record_ids::table
        .load::<(String, i64)>(&mut conn)
        .expect("read record_ids")
        .into_iter()
        .collect();
    match backend {
        // What the issue saw: every casebook type at 1 with no record.
        Backend::Postgres => assert_eq!(
            seeded,
            [("Card", 1), ("Edgenote", 1), ("Page", 1)]
                .map(|(t, n)| (t.to_owned(), n))
                .into_iter()
                .collect()
        ),
        Backend::Sqlite => assert!(seeded.is_empty(), "{seeded:?}"),
    }
    // A type that did use id 1 keeps it taken: a page 1 that exists.
    let now = sql_time(chrono::Utc::now().naive_utc());
    conn.batch_execute(&format!(
        "INSERT INTO cases (slug, title, version, created_at, updated_at) \
         VALUES ('c', 'C', 1, '{now}', '{now}');\n\
         INSERT INTO records (record_type, id, case_id, position, fields, version, created_at, updated_at) \
         VALUES ('Page', 1, 1, 0, '{{\"title\": \"One\"}}', 1, '{now}', '{now}');\n\
         DELETE FROM record_ids WHERE record_type = 'Page';\n\
         INSERT INTO record_ids (record_type, last_id) VALUES ('Page', 1);"
    ))
    .expect("a page 1");
    baton::db::migrate(&mut conn).expect("migrate the rest");
    let left: BTreeMap<String, i64> = record_ids::table
        .load::<(String, i64)>(&mut conn)
        .expect("read record_ids")
        .into_iter()
        .collect();
    assert_eq!(
        left,
        [("Page".to_owned(), 1)].into_iter().collect(),
        "only the used type keeps its last id"
    );
}
