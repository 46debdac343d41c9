//! TLS to PostgreSQL. A build with the `postgres-tls` feature connects both
//! the pool (libpq) and the event listener (tokio-postgres) with TLS when
//! `DATABASE_URL` says `sslmode=require`; a build without it refuses such a
//! URL at start, saying what to do, instead of running a listener that can
//! never connect. (`.ci/run` runs this file in both builds.)

mod common;

#[cfg(not(feature = "postgres-tls"))]
#[test]
fn a_build_without_tls_refuses_sslmode_require_at_start() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_baton"))
        .arg("serve")
        .env(
            "DATABASE_URL",
            "postgres://postgres@127.0.0.1:5432/test?sslmode=require",
        )
        .env("BATON_JWT_SECRET", "tls-test-secret-tls-test-secret-tls")
        .env("BATON_BIND", "127.0.0.1:0")
        .output()
        .expect("run baton serve");
    assert!(!output.status.success(), "it started");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("sslmode=require") && stderr.contains("--features postgres-tls"),
        "{stderr}"
    );
}

#[cfg(feature = "postgres-tls")]
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn with_sslmode_require_both_connections_use_tls() {
    use baton::models::Role;
    use common::{Backend, ServerProcess, TestApp};
    use diesel::prelude::*;

    let Some(app) = TestApp::start(Backend::Postgres).await else {
        return;
    };
    let secure = format!("{}?sslmode=require", app.db_url);
    let a = ServerProcess::spawn(&secure, "tls-a", &[]).await;
    let b = ServerProcess::spawn(&secure, "tls-b", &[]).await;
    let bob = app.user("Bob").await.tab("bob-tab");
    let rita = app.user("Rita").await.tab("rita-tab");
    let f = app
        .case("c", &[(&bob, Role::Editor), (&rita, Role::Reader)])
        .await;
    // An event written through A reaches a tab on B: B's listener works.
    let (mut tab, _) = app.open_tab_at(&b.base, "c", &rita).await;
    let lock = app.lock_at(&a.base, &bob, "Card", f.card_id).await;
    let seen = tab.next_change().await;
    assert_eq!(seen["watchable"]["id"], lock["id"], "{seen}");

    // Every connection of the two instances, listeners included, is TLS.
    let database = app.db_url.rsplit('/').next().unwrap().to_owned();
    let mut admin = diesel::PgConnection::establish(&app.db_url).expect("connect");
    #[derive(QueryableByName)]
    struct Session {
        #[diesel(sql_type = diesel::sql_types::Text)]
        application_name: String,
        #[diesel(sql_type = diesel::sql_types::Bool)]
        ssl: bool,
    }
    let connections: Vec<Session> = diesel::sql_query(
        "SELECT a.application_name, s.ssl FROM pg_stat_activity a \
         JOIN pg_stat_ssl s USING (pid) WHERE a.datname = $1 AND a.pid <> pg_backend_pid()",
    )
    .bind::<diesel::sql_types::Text, _>(&database)
    .load(&mut admin)
    .expect("pg_stat_ssl");
    // Three instances: A, B and the test's own in-process one. A TLS build
    // negotiates TLS whenever the server offers it (libpq's and the
    // listener's default `sslmode=prefer`), so every connection here is TLS;
    // A and B could not have connected otherwise.
    let listeners: Vec<&Session> = connections
        .iter()
        .filter(|c| c.application_name == baton::realtime::pg_bus::LISTENER_NAME)
        .collect();
    assert_eq!(listeners.len(), 3, "one listener per instance");
    assert!(listeners.iter().all(|c| c.ssl), "a listener without TLS");
    let plain = connections.iter().filter(|c| !c.ssl).count();
    assert_eq!(
        plain,
        0,
        "{plain} of {} connections do not use TLS",
        connections.len()
    );
}
