//! Which databases a benchmark runs on, and running it on each. (Its own
//! file, included by the benchmarks that take `--backend`.)

use clap::ValueEnum;

use crate::support::ScratchPg;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backends {
    All,
    Sqlite,
    Postgres,
}

/// Runs `run(name, database_url, pool_size)` on a temporary SQLite file and
/// on a scratch PostgreSQL database (`<prefix>_…` on `postgres_url`), as
/// `backends` says: each run's outcome, by the backend's name. A PostgreSQL
/// server that cannot be used is said and skipped: not a failure of baton.
pub fn on_each<T>(
    backends: Backends,
    postgres_url: &str,
    prefix: &str,
    mut run: impl FnMut(&'static str, &str, u32) -> Result<T, BoxError>,
) -> Vec<(&'static str, Result<T, BoxError>)> {
    let mut outcomes = Vec::new();
    if backends != Backends::Postgres {
        let outcome = tempfile::tempdir().map_err(BoxError::from).and_then(|dir| {
            let path = dir.path().join("bench.sqlite3");
            let path = path.to_str().ok_or("temporary path is not UTF-8")?;
            // SQLite has one writer at a time; a few connections are plenty.
            run("SQLite", path, 8)
        });
        outcomes.push(("SQLite", outcome));
    }
    if backends != Backends::Sqlite {
        match ScratchPg::create(postgres_url, prefix) {
            Ok(db) => outcomes.push(("PostgreSQL", run("PostgreSQL", &db.url, 32))),
            Err(e) => eprintln!("PostgreSQL skipped: cannot use {postgres_url}: {e}"),
        }
    }
    outcomes
}
