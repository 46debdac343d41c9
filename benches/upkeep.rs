//! Upkeep figures: what the audit trail costs on disk after many lock
//! cycles, with and without its frames cleared and with a retention; and
//! how long `baton backup` takes, and how big the copy is, for a SQLite
//! database of many records while saves go on.
//!
//! ```text
//! cargo bench --bench upkeep
//! cargo bench --bench upkeep -- --backend sqlite --cycles 20000 --records 10000
//! ```
//!
//! Per backend, baton runs in-process on 127.0.0.1 (2 HTTP workers):
//!
//! 1. SQLite only: `--records` cards are planted in one case, then the real
//!    `baton backup` binary copies the database while every client saves
//!    its own card in a loop; the copy's size and time, and the saves
//!    acknowledged meanwhile.
//! 2. `--cycles` lock cycles over HTTP (`POST /locks` 201, `DELETE
//!    /locks/:id` 204; every client its own user, tab and card): two audit
//!    rows each. The events table (with its indexes) is measured after a
//!    vacuum: as written (on PostgreSQL each audit row still carries the
//!    frame it announced; the heartbeat that clears them is held off), with
//!    the frames cleared (the heartbeat's own prune, run as a minute later),
//!    and after the retention deleted the older half (`prune_due` passes,
//!    the reaper's, with a 90-day retention and that half dated back 100
//!    days), with the longest pass.
//!
//! PostgreSQL runs in a scratch database `baton_upkeep_<random>` created on
//! `BATON_BENCH_POSTGRES_URL` and dropped at the end.

#[path = "support/backends.rs"]
mod backends;
mod support;

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use backends::Backends;
use baton::auth::{password, tokens};
use baton::config::Settings;
use baton::db::schema::events;
use baton::db::{DbConn, DbError};
use baton::error::AppError;
use baton::locks::engine::retention::{self, AuditRetention};
use baton::models::{Case, Membership, Role, User};
use baton::server;
use baton::state::AppState;
use clap::Parser;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use support::tab_client;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const JWT_SECRET: &[u8] = b"baton-bench-secret-baton-bench-secret";

#[derive(Parser)]
#[command(about = "The audit trail's size with and without retention, and SQLite backups")]
struct Args {
    /// Which database backends to measure.
    #[arg(long, env = "BATON_BENCH_BACKEND", value_enum, default_value_t = Backends::All)]
    backend: Backends,

    /// Lock cycles (acquire + release) made before the trail is measured.
    #[arg(long, default_value_t = 100_000)]
    cycles: u64,

    /// Records in the SQLite database that is backed up.
    #[arg(long, default_value_t = 100_000)]
    records: u64,

    /// Concurrent clients (tabs), each on its own card.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..))]
    clients: u16,

    /// Server on which the scratch PostgreSQL database is created.
    #[arg(
        long,
        env = "BATON_BENCH_POSTGRES_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    postgres_url: String,

    /// Passed by `cargo bench` to every bench binary; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() {
    let args = Args::parse();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "upkeep: {} lock cycles, {} clients, 2 HTTP workers, {cpus} CPUs; \
         SQLite backup of {} records.\n",
        args.cycles, args.clients, args.records
    );
    let mut failed = false;
    let runs = backends::on_each(
        args.backend,
        &args.postgres_url,
        "baton_upkeep",
        |name, url, pool| run_backend(name, url, pool, &args),
    );
    for (name, outcome) in runs {
        if let Err(e) = outcome {
            eprintln!("{name} run failed: {e}");
            failed = true;
        }
    }
    if failed {
        std::process::exit(1);
    }
}

fn run_backend(
    name: &'static str,
    database_url: &str,
    pool_size: u32,
    args: &Args,
) -> Result<(), BoxError> {
    let mut settings = Settings::defaults(database_url);
    settings.workers = Some(2);
    settings.database.db_pool_size = pool_size;
    // The heartbeat clears delivered frames; held off, the trail is
    // measured as written, and cleared below by the same code.
    settings.heartbeat_interval = Duration::from_secs(3600);
    // Planting the records and vacuuming are set-up, not requests.
    settings.database.db_timeout = Duration::from_secs(60);
    let url = database_url.to_owned();
    let clients = usize::from(args.clients);
    let (cycles, records) = (args.cycles, args.records);

    actix_web::rt::System::new().block_on(async move {
        let state = server::build_state(settings, JWT_SECRET)?;
        let seeded = seed(&state, clients).await?;
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let base = format!("http://{}", listener.local_addr()?);
        let server = server::start(state.clone(), listener)?;
        let handle = server.handle();
        actix_web::rt::spawn(server);
        let tabs = seeded
            .tabs
            .iter()
            .map(|(token, session, card)| Tab::new(&base, token, session, *card))
            .collect::<Result<Vec<_>, _>>()?;

        if state.db.backend() == baton::db::Backend::Sqlite {
            backup_figures(&state, &url, &tabs, seeded.case_id, records).await?;
        }

        let started = Instant::now();
        lock_cycles(&tabs, cycles).await?;
        let took = started.elapsed();
        println!(
            "{name}: {cycles} lock cycles in {:.1} s ({:.0} cycles/s)",
            took.as_secs_f64(),
            cycles as f64 / took.as_secs_f64()
        );
        println!(
            "{name}: events table (rows, with payload, bytes on disk with indexes, bytes per audit row):"
        );
        let written = measure(&state).await?;
        written.print(name, "as written");

        let cleared = clear_frames(&state).await?;
        let after_clearing = measure(&state).await?;
        after_clearing.print(name, &format!("frames cleared ({cleared} rows)"));

        let (deleted, passes, longest) = retain(&state).await?;
        let after_retention = measure(&state).await?;
        after_retention.print(
            name,
            &format!(
                "retention: older half deleted ({deleted} rows in {passes} passes, longest {:.1} ms)",
                longest.as_secs_f64() * 1000.0
            ),
        );
        println!();
        handle.stop(false).await;
        Ok(())
    })
}

// ---- seeding ----

struct Seeded {
    case_id: baton::models::CaseId,
    /// (token, session, card) per client.
    tabs: Vec<(String, String, i64)>,
}

/// One case with a page and a card per client; each client its own editor.
async fn seed(state: &AppState, clients: usize) -> Result<Seeded, BoxError> {
    let password_hash = password::hash("bench")?;
    let (case_id, users) = state
        .db
        .write(None, move |tx| {
            let case = Case::create(
                tx.conn,
                "upkeep",
                "Upkeep",
                baton::models::CaseMaker::Person,
                tx.now,
            )?;
            let page = support::plant(
                tx,
                "Page",
                case.id,
                None,
                Some(0),
                serde_json::json!({"title": "Page 1"}),
            )?;
            let mut users = Vec::with_capacity(clients);
            for i in 0..clients {
                let user = User::create(
                    tx.conn,
                    &format!("keeper{i}@bench.invalid"),
                    &format!("Keeper {i}"),
                    &password_hash,
                    false,
                    tx.now,
                )?;
                Membership::create(tx.conn, case.id, user.id, Role::Editor, tx.now)?;
                let card = support::plant(
                    tx,
                    "Card",
                    case.id,
                    Some(page),
                    None,
                    serde_json::json!({"content": ""}),
                )?;
                users.push((user.id, card));
            }
            Ok::<_, DbError>((case.id, users))
        })
        .await?;
    let jwt = state.jwt.clone();
    let tabs = state
        .db
        .write(None, move |tx| {
            users
                .into_iter()
                .map(|(user, card)| {
                    let token = tokens::issue(tx.conn, &jwt, user, tx.now)?;
                    Ok((token, uuid::Uuid::new_v4().to_string(), card))
                })
                .collect::<Result<Vec<_>, AppError>>()
        })
        .await?;
    Ok(Seeded { case_id, tabs })
}

/// Plants `count` more cards, 100 to a page (a create goes last among its
/// siblings, so one page of them all would make planting quadratic), a
/// page of them a transaction.
async fn plant_records(
    state: &AppState,
    case_id: baton::models::CaseId,
    count: u64,
) -> Result<(), BoxError> {
    let mut left = count;
    while left > 0 {
        let now = left.min(100);
        state
            .db
            .write(None, move |tx| {
                let page = support::plant(
                    tx,
                    "Page",
                    case_id,
                    None,
                    None,
                    serde_json::json!({ "title": "Planted" }),
                )?;
                for i in 0..now {
                    support::plant(
                        tx,
                        "Card",
                        case_id,
                        Some(page),
                        Some(i as i32),
                        serde_json::json!({ "content": format!("Record {i}: a card of a case, as a team writes it.") }),
                    )?;
                }
                Ok::<_, DbError>(())
            })
            .await?;
        left -= now;
    }
    Ok(())
}

// ---- HTTP ----

struct Tab {
    http: reqwest::Client,
    base: String,
    card: i64,
}

impl Tab {
    fn new(base: &str, token: &str, session: &str, card: i64) -> Result<Tab, BoxError> {
        Ok(Tab {
            http: tab_client(token, session, reqwest::Client::builder())?,
            base: base.to_owned(),
            card,
        })
    }

    async fn lock_cycle(&self) -> Result<(), BoxError> {
        let body =
            serde_json::json!({ "lock": { "lockableType": "Card", "lockableParam": self.card } });
        let response = self
            .http
            .post(format!("{}/locks", self.base))
            .body(body.to_string())
            .send()
            .await?;
        if response.status().as_u16() != 201 {
            return Err(format!("POST /locks answered {}", response.status()).into());
        }
        let lock: serde_json::Value = response.json().await?;
        let id = lock["id"].as_i64().ok_or("a lock without an id")?;
        let response = self
            .http
            .delete(format!("{}/locks/{id}", self.base))
            .send()
            .await?;
        if response.status().as_u16() != 204 {
            return Err(format!("DELETE /locks/{id} answered {}", response.status()).into());
        }
        Ok(())
    }

    async fn save(&self, n: u64) -> Result<(), BoxError> {
        let body = serde_json::json!({ "card": { "content": format!("save {n}") } });
        let response = self
            .http
            .patch(format!("{}/cards/{}", self.base, self.card))
            .body(body.to_string())
            .send()
            .await?;
        if response.status().as_u16() != 200 {
            return Err(format!("PATCH answered {}", response.status()).into());
        }
        Ok(())
    }
}

/// `cycles` lock cycles shared among the tabs, all at once.
async fn lock_cycles(tabs: &[Tab], cycles: u64) -> Result<(), BoxError> {
    let next = AtomicU64::new(0);
    let work = tabs.iter().map(|tab| {
        let next = &next;
        async move {
            while next.fetch_add(1, Ordering::Relaxed) < cycles {
                tab.lock_cycle().await?;
            }
            Ok::<_, BoxError>(())
        }
    });
    for outcome in futures_util::future::join_all(work).await {
        outcome?;
    }
    Ok(())
}

// ---- backup ----

async fn backup_figures(
    state: &AppState,
    url: &str,
    tabs: &[Tab],
    case_id: baton::models::CaseId,
    records: u64,
) -> Result<(), BoxError> {
    let started = Instant::now();
    plant_records(state, case_id, records).await?;
    println!(
        "SQLite: {records} records planted in {:.1} s; database file {} bytes (and its WAL {} bytes)",
        started.elapsed().as_secs_f64(),
        file_size(url),
        file_size(&format!("{url}-wal"))
    );
    let dir = tempfile::tempdir()?;
    let copy = dir.path().join("backup.sqlite3");
    let stop = AtomicBool::new(false);
    let saves = AtomicU64::new(0);
    let storm = tabs.iter().map(|tab| {
        let (stop, saves) = (&stop, &saves);
        async move {
            while !stop.load(Ordering::Relaxed) {
                tab.save(saves.fetch_add(1, Ordering::Relaxed)).await?;
            }
            Ok::<_, BoxError>(())
        }
    });
    let backup = async {
        // Saves under way first.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let at_start = saves.load(Ordering::Relaxed);
        let began = Instant::now();
        let (url, copy) = (url.to_owned(), copy.clone());
        let output = tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_baton"))
                .args(["backup", copy.to_str().unwrap_or_default()])
                .env("DATABASE_URL", url)
                .env("RUST_LOG", "warn")
                .output()
        })
        .await;
        let took = began.elapsed();
        let during = saves.load(Ordering::Relaxed) - at_start;
        stop.store(true, Ordering::Relaxed);
        (output, took, during)
    };
    let (storm, (output, took, during)) =
        futures_util::future::join(futures_util::future::join_all(storm), backup).await;
    for outcome in storm {
        outcome?;
    }
    let output = output??;
    if !output.status.success() {
        return Err(format!(
            "baton backup failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    println!(
        "SQLite: `baton backup` said: {}",
        String::from_utf8_lossy(&output.stdout).trim()
    );
    println!(
        "SQLite: backup of {records} records: {} bytes in {:.2} s (wall, process included); \
         {during} saves acknowledged meanwhile; quick_check {}\n",
        file_size(copy.to_str().unwrap_or_default()),
        took.as_secs_f64(),
        quick_check(&copy)?
    );
    Ok(())
}

fn file_size(path: &str) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

#[derive(QueryableByName)]
struct Check {
    #[diesel(sql_type = diesel::sql_types::Text)]
    quick_check: String,
}

fn quick_check(path: &std::path::Path) -> Result<String, BoxError> {
    let mut conn = SqliteConnection::establish(path.to_str().unwrap_or_default())?;
    let rows: Vec<Check> = diesel::sql_query("PRAGMA quick_check").load(&mut conn)?;
    Ok(rows
        .into_iter()
        .map(|r| r.quick_check)
        .collect::<Vec<_>>()
        .join("; "))
}

// ---- the events table ----

struct Size {
    rows: i64,
    audit_rows: i64,
    with_payload: i64,
    bytes: i64,
}

impl Size {
    fn print(&self, backend: &str, what: &str) {
        let per_row = if self.audit_rows > 0 {
            self.bytes as f64 / self.audit_rows as f64
        } else {
            0.0
        };
        println!(
            "  {backend:<10} {what:<72} {:>8} rows {:>8} with payload {:>12} bytes {:>7.1} B/audit row",
            self.rows, self.with_payload, self.bytes, per_row
        );
    }
}

#[derive(QueryableByName)]
struct Bytes {
    #[diesel(sql_type = diesel::sql_types::Nullable<BigInt>)]
    bytes: Option<i64>,
}

/// The events table's rows and its size on disk with its indexes, after a
/// vacuum (what the table needs, not what deleted rows left behind).
async fn measure(state: &AppState) -> Result<Size, BoxError> {
    let url = state.settings.database.database_url.clone();
    tokio::task::spawn_blocking(move || -> Result<Size, BoxError> {
        let mut conn = baton::db::connect(&url)?;
        let bytes = match &mut conn {
            DbConn::Postgresql(pg) => {
                pg.batch_execute("VACUUM FULL events")?;
                diesel::sql_query("SELECT pg_total_relation_size('events')::bigint AS bytes")
                    .get_result::<Bytes>(pg)?
                    .bytes
            }
            DbConn::Sqlite(sqlite) => {
                sqlite.batch_execute("VACUUM")?;
                diesel::sql_query(
                    "SELECT sum(pgsize) AS bytes FROM dbstat \
                     WHERE name = 'events' OR name LIKE 'index_events%'",
                )
                .get_result::<Bytes>(sqlite)?
                .bytes
            }
        }
        .unwrap_or(0);
        let rows = events::table.count().get_result(&mut conn)?;
        let audit_rows = events::table
            .filter(events::action.is_not_null())
            .count()
            .get_result(&mut conn)?;
        let with_payload = events::table
            .filter(events::payload.is_not_null())
            .count()
            .get_result(&mut conn)?;
        Ok(Size {
            rows,
            audit_rows,
            with_payload,
            bytes,
        })
    })
    .await?
}

/// The heartbeat's prune, run as it would be a minute after the cycles:
/// frame-only rows deleted, audit rows' frames cleared, a batch a call.
async fn clear_frames(state: &AppState) -> Result<usize, BoxError> {
    let mut total = 0;
    loop {
        let n = state
            .db
            .write(None, |tx| {
                let later = baton::clock::after(
                    tx.now,
                    baton::realtime::pg_bus::OUTBOX_RETENTION + Duration::from_secs(1),
                );
                baton::realtime::pg_bus::prune_outbox(tx.conn, later).map_err(AppError::from)
            })
            .await?;
        if n == 0 {
            return Ok(total);
        }
        total += n;
    }
}

/// Dates the older half of the audit rows back 100 days, then runs the
/// reaper's retention passes (90 days) until one deletes nothing: the rows
/// deleted, the passes, the longest pass.
async fn retain(state: &AppState) -> Result<(usize, usize, Duration), BoxError> {
    state
        .db
        .write(None, |tx| {
            let ids: Vec<i64> = events::table
                .select(events::id)
                .filter(events::action.is_not_null())
                .order(events::id.asc())
                .load(tx.conn)?;
            let Some(&middle) = ids.get(ids.len() / 2) else {
                return Ok(0);
            };
            let then = baton::clock::before(tx.now, Duration::from_secs(100 * 24 * 3600));
            diesel::update(events::table.filter(events::id.lt(middle)))
                .set(events::at.eq(then))
                .execute(tx.conn)
                .map_err(AppError::from)
        })
        .await?;
    let keep = AuditRetention {
        keep: Duration::from_secs(90 * 24 * 3600),
        frames_live: baton::realtime::pg_bus::OUTBOX_RETENTION,
    };
    let (mut deleted, mut passes, mut longest) = (0, 0, Duration::ZERO);
    loop {
        let started = Instant::now();
        let n = state
            .db
            .write(None, move |tx| retention::prune_due(tx, &keep))
            .await?;
        longest = longest.max(started.elapsed());
        passes += 1;
        if n == 0 {
            return Ok((deleted, passes, longest));
        }
        deleted += n;
    }
}
