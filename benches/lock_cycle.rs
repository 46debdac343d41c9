//! Lock-cycle benchmark: how many lock/release cycles and guarded record
//! updates baton serves per second over HTTP, next to the bare SQL of a lock
//! cycle and of a guarded update, each client on a connection it holds (as
//! pgbench runs it); and how many `POST /guard` questions (a team's backend
//! asking before it writes the same record in its own database), next to
//! the guarded PATCH.
//!
//! Each is measured against the HTTP floor too (`support/floor.rs`): a bare
//! actix-web server in this process, as many workers as baton's, that
//! answers the same requests from the same clients with nothing but their
//! raw statements, prepared. The floor is the reference of the targets:
//! whatever baton spends beyond it is its own work. The CPU time per
//! operation (this process's, and PostgreSQL's processes') is printed for
//! baton, the floor and the raw SQL, to show where the difference goes.
//!
//! ```text
//! cargo bench --bench lock_cycle
//! cargo bench --bench lock_cycle -- --backend postgres --duration 5s --clients 16
//! cargo bench --bench lock_cycle -- --schema examples/schemas/book.toml --type BookComponent
//! ```
//!
//! The server declares the record types of `--schema FILE` (the built-in
//! casebook when left out), and every client locks and saves a record of
//! `--type NAME` (default `Card`). The seed is one case, one record of each
//! type above the chosen one (its chain of parents), and one record of the
//! type per client, its required fields given values their JSON Schemas
//! accept. A save changes the type's first string field that is not unique.
//!
//! Every client is its own user with its own session (browser tab) and works
//! on its own record: there is no contention, so the figures are throughput,
//! not conflicts. PostgreSQL runs in a scratch database `baton_bench_<random>`
//! created on `BATON_BENCH_POSTGRES_URL` and dropped at the end.

#[path = "support/backends.rs"]
mod backends;
#[path = "support/floor.rs"]
mod floor;
mod support;

use std::future::Future;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use backends::Backends;
use baton::auth::{api_keys, tokens};
use baton::config::Settings;
use baton::db::schema::{locks, records};
use baton::db::{DbConn, DbError};
use baton::error::AppError;
use baton::models::lock::NewLock;
use baton::models::Role;
use baton::models::{ApiKey, Case, CaseId, Lock, Membership, RecordId, User, UserId};
use baton::schema::{FieldKind, RecordType, Schema, Store};
use baton::state::AppState;
use baton::{clock, server};
use clap::Parser;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::{Map, Value};
use support::tab_client;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const JWT_SECRET: &[u8] = b"baton-bench-secret-baton-bench-secret";

/// HTTP workers of baton's server, and of the floor's.
const HTTP_WORKERS: usize = 2;

#[derive(Parser)]
#[command(about = "Lock cycles and guarded writes per second, over HTTP and as raw SQL")]
struct Args {
    /// Which database backends to measure.
    #[arg(long, env = "BATON_BENCH_BACKEND", value_enum, default_value_t = Backends::All)]
    backend: Backends,

    /// How long each measurement runs, after the warm-up.
    #[arg(long, env = "BATON_BENCH_DURATION", default_value = "3s", value_parser = humantime::parse_duration)]
    duration: Duration,

    /// Load before each measurement that is not counted.
    #[arg(long, env = "BATON_BENCH_WARMUP", default_value = "500ms", value_parser = humantime::parse_duration)]
    warmup: Duration,

    /// Numbers of concurrent clients, comma separated.
    #[arg(
        long,
        env = "BATON_BENCH_CLIENTS",
        value_delimiter = ',',
        default_value = "1,16,64"
    )]
    clients: Vec<usize>,

    /// The schema file that declares the record types (TOML); the built-in
    /// casebook when left out.
    #[arg(long, env = "BATON_BENCH_SCHEMA")]
    schema: Option<PathBuf>,

    /// The declared record type each client locks and saves.
    #[arg(
        long = "type",
        value_name = "NAME",
        env = "BATON_BENCH_TYPE",
        default_value = "Card"
    )]
    record_type: String,

    /// Server on which the scratch PostgreSQL database is created.
    #[arg(
        long,
        env = "BATON_BENCH_POSTGRES_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    postgres_url: String,

    /// SQLite's `synchronous` for the server (`BATON_SQLITE_SYNCHRONOUS`),
    /// comma separated: each value is measured in turn, in the same run
    /// (`normal,full` gives the cost of surviving a power cut).
    #[arg(long, value_delimiter = ',', value_enum, default_value = "normal")]
    sqlite_synchronous: Vec<baton::config::SqliteSynchronous>,

    /// Passed by `cargo bench` to every bench binary; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() {
    let args = Args::parse();
    if args.clients.contains(&0) {
        eprintln!("--clients: every client count must be at least 1");
        std::process::exit(2);
    }
    let target = match Target::from_args(&args) {
        Ok(target) => target,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "lock_cycle: {:?} per measurement after {:?} warm-up; 2 HTTP workers; {cpus} CPUs; \
         rates in cycles/s (PATCH: requests/s), latencies in ms.",
        args.duration, args.warmup
    );
    println!("{}\n", target.describe());
    print_header();

    let mut rows = Vec::new();
    let mut failed = false;
    let mut runs = Vec::new();
    for (i, &synchronous) in args.sqlite_synchronous.iter().enumerate() {
        // PostgreSQL once, with the first; SQLite with each.
        let backend = match (args.backend, i) {
            (_, 0) => args.backend,
            (Backends::Postgres, _) => continue,
            _ => Backends::Sqlite,
        };
        runs.extend(backends::on_each(
            backend,
            &args.postgres_url,
            "baton_bench",
            |name, url, pool| {
                let name = match (name, synchronous) {
                    ("SQLite", baton::config::SqliteSynchronous::Full) => {
                        "SQLite, synchronous=full"
                    }
                    _ => name,
                };
                run_backend(name, url, pool, &args, &target, synchronous)
            },
        ));
    }
    for (name, outcome) in runs {
        match outcome {
            Ok(mut r) => rows.append(&mut r),
            Err(e) => {
                eprintln!("{name} run failed: {e}");
                failed = true;
            }
        }
    }

    print_cpu(&rows);
    print_targets(&rows, &target);
    let errors: u64 = rows.iter().map(Row::errors).sum();
    if errors > 0 {
        eprintln!("{errors} requests or statements failed; the figures above are not valid.");
    }
    if failed || errors > 0 {
        std::process::exit(1);
    }
}

// ---- the record type ----

/// The schema the server declares and the record type the clients lock and
/// save.
struct Target {
    /// How the run names the schema: its file, or the built-in casebook.
    schema_name: String,
    schema_file: Option<PathBuf>,
    ty: &'static RecordType,
    /// The string field every save changes.
    field: &'static str,
}

impl Target {
    /// Loads `--schema` (the casebook when none is given), makes it the one
    /// in force in this process and finds `--type` in it.
    fn from_args(args: &Args) -> Result<Target, String> {
        let schema = match &args.schema {
            Some(path) => Schema::load(path).map_err(|e| e.to_string())?,
            None => Schema::casebook(),
        };
        let schema = baton::schema::install(schema)?;
        let schema_name = args.schema.as_ref().map_or_else(
            || "casebook (built-in)".to_owned(),
            |path| path.display().to_string(),
        );
        let Some(ty) = schema.get(&args.record_type) else {
            let names: Vec<&str> = schema.types().iter().map(|t| t.name.as_str()).collect();
            return Err(format!(
                "--type {}: {schema_name} declares no such type (it declares {})",
                args.record_type,
                names.join(", ")
            ));
        };
        if ty.store != Store::Stored {
            return Err(format!(
                "--type {}: its records are stored outside baton (store = \"external\"), \
                 so there is nothing to save",
                ty.name
            ));
        }
        // A save's value is as long as any `edit_text`; the first string
        // field that is not unique and takes it (no format, enum or short
        // maximum in the way) is the one saved.
        let sample = Value::from(edit_text());
        let field = ty
            .fields
            .iter()
            .find(|f| {
                f.kind() == FieldKind::String && !ty.unique.contains(&f.name) && f.accepts(&sample)
            })
            .ok_or_else(|| {
                format!(
                    "--type {}: it has no string field, not unique, that takes a text such as {sample}",
                    ty.name
                )
            })?;
        Ok(Target {
            schema_name,
            schema_file: args.schema.clone(),
            ty,
            field: field.name.as_str(),
        })
    }

    /// The line saying what the run measures.
    fn describe(&self) -> String {
        let ty = self.ty;
        format!(
            "schema {}, type {}: POST /locks {{\"lock\": {{\"lockableType\": \"{}\", …}}}}, \
             PATCH /{}/:id {{\"{}\": {{\"{}\": \"…\"}}}}",
            self.schema_name, ty.name, ty.name, ty.plural, ty.body_key, self.field
        )
    }

    /// The fields of the `n`th seeded record of `ty` (0-based), as a
    /// create accepts them.
    fn seed_fields(ty: &RecordType, n: usize) -> Result<Map<String, Value>, String> {
        let mut given = Map::new();
        for field in &ty.fields {
            let unique = ty.unique.contains(&field.name);
            if !ty.required.contains(&field.name) && !unique {
                continue;
            }
            let value = sample_values(ty, field, n, unique)
                .into_iter()
                .find(|v| field.accepts(v))
                .ok_or_else(|| {
                    format!(
                        "{}.{}: no sample value fits its schema {}",
                        ty.name, field.name, field.schema
                    )
                })?;
            given.insert(field.name.clone(), value);
        }
        ty.check_create(&given).map_err(|problems| {
            let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
            format!(
                "the seeded {} does not fit the schema: {}",
                ty.words,
                messages.join(" ")
            )
        })
    }
}

/// Values to try, in order, for a field of a seeded record: the first its
/// JSON Schema accepts is used. A unique field's values differ by `n`.
fn sample_values(
    ty: &RecordType,
    field: &baton::schema::Field,
    n: usize,
    unique: bool,
) -> Vec<Value> {
    let schema = &field.schema;
    let mut values = Vec::new();
    if !unique {
        if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
            values.push(first.clone());
        }
        values.extend(field.default_value().cloned());
    }
    let minimum = schema.get("minimum").and_then(Value::as_i64).unwrap_or(0);
    match field.kind() {
        FieldKind::Integer | FieldKind::Number => values.push(Value::from(minimum + n as i64)),
        FieldKind::Boolean => values.push(Value::Bool(false)),
        FieldKind::String | FieldKind::Mixed => {
            values.extend(
                match field.format() {
                    Some("date") => vec![format!("2026-01-{:02}", n % 28 + 1)],
                    Some("date-time") => vec![format!("2026-01-01T09:{:02}:00Z", n % 60)],
                    Some("email") => vec![format!("bench{n}@example.com")],
                    Some("uri") => vec![format!("https://example.com/{n}")],
                    _ => vec![
                        format!("Bench {} {}", ty.words, n + 1),
                        format!("bench-{}", n + 1),
                        (n + 1).to_string(),
                    ],
                }
                .into_iter()
                .map(Value::from),
            );
        }
    }
    values
}

/// The text a save (PATCH or raw guarded update) writes.
fn edit_text() -> String {
    format!("Edited at {:?}", Instant::now())
}

// ---- one backend ----

/// Starts baton on `database_url`, seeds it and measures every client count.
/// Runs in its own actix system, so the server and its reaper stop with it.
fn run_backend(
    name: &'static str,
    database_url: &str,
    pool_size: u32,
    args: &Args,
    target: &Target,
    synchronous: baton::config::SqliteSynchronous,
) -> Result<Vec<Row>, BoxError> {
    let mut settings = Settings::defaults(database_url);
    settings.database.sqlite_synchronous = synchronous;
    settings.workers = Some(HTTP_WORKERS);
    settings.database.db_pool_size = pool_size;
    // The server loads and installs the same schema as `Target::from_args`.
    settings.database.schema = target.schema_file.clone();
    // 64 editors, or one per client if more clients were asked for.
    let editors = args.clients.iter().copied().max().unwrap_or(1).max(64);

    actix_web::rt::System::new().block_on(async move {
        let state = server::build_state(settings, JWT_SECRET)?;
        let editors = seed(&state, target, editors).await?;
        // The lease a lock of the type gets, for the raw lock cycle.
        let ttl = target.ty.lock.lease.unwrap_or(state.settings.lock_ttl);
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let base = format!("http://{}", listener.local_addr()?);
        let server = server::start(state.clone(), listener)?;
        let handle = server.handle();
        actix_web::rt::spawn(server);
        // The HTTP floor beside it, on the same database and seed.
        let floor_listener = TcpListener::bind("127.0.0.1:0")?;
        let floor_base = format!("http://{}", floor_listener.local_addr()?);
        let floor = floor::start(
            floor::FloorSetup {
                database_url: state.settings.database.database_url.clone(),
                postgres: name == "PostgreSQL",
                sqlite_synchronous: synchronous.pragma(),
                jwt: state.jwt.clone(),
                type_name: target.ty.name.clone(),
                plural: target.ty.plural.clone(),
                ttl,
                workers: HTTP_WORKERS,
            },
            floor_listener,
        )?;
        let floor_handle = floor.handle();
        actix_web::rt::spawn(floor);

        let mut rows = Vec::new();
        for &n in &args.clients {
            let clients = editors[..n]
                .iter()
                .map(|e| HttpClient::new(&base, target, e))
                .collect::<Result<Vec<_>, _>>()?;
            let url = state.settings.database.database_url.as_str();
            settle(url)?;
            let lock = measure_http(&clients, args, |c| c.lock_cycle()).await;
            settle(url)?;
            let patch = measure_http(&clients, args, |c| c.patch_record()).await;
            settle(url)?;
            let guard = measure_http(&clients, args, |c| c.guard()).await;
            drop(clients);
            let floor_clients = editors[..n]
                .iter()
                .map(|e| HttpClient::new(&floor_base, target, e))
                .collect::<Result<Vec<_>, _>>()?;
            settle(url)?;
            let floor_lock = measure_http(&floor_clients, args, |c| c.lock_cycle()).await;
            settle(url)?;
            let floor_patch = measure_http(&floor_clients, args, |c| c.patch_record()).await;
            settle(url)?;
            let floor_guard = measure_http(&floor_clients, args, |c| c.guard()).await;
            let floor = Floor {
                lock: floor_lock,
                patch: floor_patch,
                guard: floor_guard,
            };
            drop(floor_clients);
            settle(url)?;
            let raw = measure_raw(&state, &editors[..n], args, ttl, raw_lock_cycle).await?;
            settle(url)?;
            let raw_patch =
                measure_raw(&state, &editors[..n], args, ttl, raw_guarded_update).await?;
            let pgbench = match name {
                "PostgreSQL" => pgbench(&state.settings.database.database_url, &editors[..n], args),
                _ => None,
            };
            let row = Row {
                backend: name,
                clients: n,
                lock,
                patch,
                guard,
                raw,
                raw_patch,
                pgbench,
                floor,
            };
            row.print();
            rows.push(row);
        }
        floor_handle.stop(false).await;
        handle.stop(false).await;
        Ok(rows)
    })
}

/// On SQLite, empties the write-ahead log before a measurement: each then
/// starts from the same log, not from the frames the measurements before it
/// left (a long log slows every page read, and autocommitted statements
/// write more of it than baton's grouped commits).
fn settle(database_url: &str) -> Result<(), BoxError> {
    if baton::db::Backend::of_url(database_url) == baton::db::Backend::Sqlite {
        let mut conn = baton::db::connect(database_url)?;
        conn.batch_execute("PRAGMA wal_checkpoint(TRUNCATE);")?;
    }
    Ok(())
}

/// One seeded user: an editor of the bench case with a record of its own.
#[derive(Clone)]
struct Editor {
    user_id: UserId,
    case_id: CaseId,
    /// The record's type and id.
    record_type: &'static str,
    record_id: RecordId,
    /// The record's fields as seeded, for the raw guarded update.
    fields: Map<String, Value>,
    /// The string field a save changes.
    field: &'static str,
    token: String,
    session_id: String,
    /// The id a team's backend knows the editor by, and its API key, for
    /// `POST /guard`.
    external_id: String,
    api_key: String,
}

/// Creates one case, one record of each type on the way down from the case
/// to the target type (its chain of parents), and `count` editors with one
/// record of the target type each.
async fn seed(state: &AppState, target: &Target, count: usize) -> Result<Vec<Editor>, BoxError> {
    let ty = target.ty;
    // The chain of parents, the case's child first.
    let mut chain: Vec<&'static RecordType> = Vec::new();
    let mut parent = ty.parent.as_deref();
    while let Some(name) = parent {
        let parent_type = baton::schema::in_force()
            .get(name)
            .ok_or_else(|| format!("{}: its parent {name} is not declared", ty.name))?;
        chain.push(parent_type);
        parent = parent_type.parent.as_deref();
    }
    chain.reverse();
    let parents = chain
        .iter()
        .map(|t| Ok((t.name.as_str(), Target::seed_fields(t, 0)?)))
        .collect::<Result<Vec<_>, String>>()?;
    let records = (0..count)
        .map(|i| Target::seed_fields(ty, i))
        .collect::<Result<Vec<_>, String>>()?;
    let type_name = ty.name.as_str();
    // Argon2 is slow on purpose; nobody logs in here, so one hash serves all.
    let (api_key, key_hash) = api_keys::generate();
    let (case_id, seeded) = state
        .db
        .write(None, move |tx| {
            let case = Case::create(
                tx.conn,
                "bench",
                "Benchmark",
                baton::models::CaseMaker::Person,
                tx.now,
            )?;
            ApiKey::create(tx.conn, "bench", &key_hash, tx.now)?;
            let mut parent_id = None;
            for (name, fields) in parents {
                let id = support::plant(tx, name, case.id, parent_id, None, Value::Object(fields))?;
                parent_id = Some(id);
            }
            let mut seeded = Vec::with_capacity(count);
            for (i, fields) in records.into_iter().enumerate() {
                // Known by an external id too, as a team's backend provisions
                // its users (`POST /auth/tokens`), so that it can ask the guard.
                let email = format!("editor{i}@bench.invalid");
                let user = User::create_external(
                    tx.conn,
                    &format!("editor-{i}"),
                    &format!("Editor {i}"),
                    Some(&email),
                    tx.now,
                )?;
                Membership::create(tx.conn, case.id, user.id, Role::Editor, tx.now)?;
                let id = support::plant(
                    tx,
                    type_name,
                    case.id,
                    parent_id,
                    None,
                    Value::Object(fields.clone()),
                )?;
                seeded.push((user.id, RecordId(id), fields, format!("editor-{i}")));
            }
            Ok::<_, DbError>((case.id, seeded))
        })
        .await?;
    let jwt = state.jwt.clone();
    let tokens = state
        .db
        .write(None, move |tx| {
            seeded
                .into_iter()
                .map(|(user_id, record_id, fields, external_id)| {
                    let token = tokens::issue(tx.conn, &jwt, user_id, tx.now)?;
                    Ok((user_id, record_id, fields, token, external_id))
                })
                .collect::<Result<Vec<_>, AppError>>()
        })
        .await?;
    Ok(tokens
        .into_iter()
        .map(|(user_id, record_id, fields, token, external_id)| Editor {
            user_id,
            case_id,
            record_type: type_name,
            record_id,
            fields,
            field: target.field,
            token,
            session_id: uuid::Uuid::new_v4().to_string(),
            external_id,
            api_key: api_key.clone(),
        })
        .collect())
}

// ---- measuring ----

/// When a measurement counts: cycles started in `[counted_from, until)`.
#[derive(Clone, Copy)]
struct Window {
    counted_from: Instant,
    until: Instant,
}

impl Window {
    fn starting_now(args: &Args) -> Window {
        let counted_from = Instant::now() + args.warmup;
        Window {
            counted_from,
            until: counted_from + args.duration,
        }
    }
}

/// What one client saw.
#[derive(Default)]
struct Samples {
    latencies: Vec<Duration>,
    /// Operations done, the warm-up's included (for the CPU per operation).
    done: u64,
    errors: u64,
    first_error: Option<String>,
}

impl Samples {
    /// Records one cycle that started at `start`; failures count even in the warm-up.
    fn record(&mut self, window: &Window, start: Instant, outcome: Result<(), String>) {
        if outcome.is_ok() {
            self.done += 1;
        }
        match outcome {
            Ok(()) if start >= window.counted_from => self.latencies.push(start.elapsed()),
            Ok(()) => {}
            Err(e) => {
                self.errors += 1;
                self.first_error.get_or_insert(e);
            }
        }
    }
}

/// Throughput and latency of one measurement, all clients together.
struct Stats {
    rate: f64,
    p50: Duration,
    p99: Duration,
    errors: u64,
    /// CPU time per operation, in µs: this process's (server, client and
    /// all) and PostgreSQL's; over the warm-up and the measurement.
    cpu: CpuPerOp,
}

#[derive(Clone, Copy, Default)]
struct CpuPerOp {
    process: f64,
    postgres: f64,
}

/// CPU time used so far, in µs: by this process, and by every process
/// named `postgres` on the machine (the server's backends). Read from
/// /proc; zero where it cannot be read.
#[derive(Clone, Copy, Default)]
struct CpuTime {
    process: f64,
    postgres: f64,
}

impl CpuTime {
    fn now() -> CpuTime {
        // SAFETY: sysconf has no preconditions.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        let used = |stat: &str| -> f64 {
            // Fields after the command's closing parenthesis: utime and
            // stime are the 12th and 13th.
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map_or("", |(_, rest)| rest)
                .split_whitespace()
                .collect();
            let field = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
            (field(11).unwrap_or(0.0) + field(12).unwrap_or(0.0)) / ticks * 1e6
        };
        let process = std::fs::read_to_string("/proc/self/stat").map_or(0.0, |s| used(&s));
        let postgres = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| {
                std::fs::read_to_string(entry.path().join("comm"))
                    .is_ok_and(|comm| comm.trim() == "postgres")
            })
            .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
            .map(|stat| used(&stat))
            .sum();
        CpuTime { process, postgres }
    }

    /// The CPU time since `self`, per one of `ops` operations.
    fn per_op(self, ops: u64) -> CpuPerOp {
        let now = CpuTime::now();
        let ops = ops.max(1) as f64;
        CpuPerOp {
            process: (now.process - self.process) / ops,
            postgres: (now.postgres - self.postgres) / ops,
        }
    }
}

impl Stats {
    fn of(window: &Window, samples: Vec<Samples>, cpu_from: CpuTime) -> Stats {
        let done = samples.iter().map(|s| s.done).sum();
        let cpu = cpu_from.per_op(done);
        let errors = samples.iter().map(|s| s.errors).sum();
        if let Some(e) = samples.iter().find_map(|s| s.first_error.as_ref()) {
            eprintln!("first error: {e}");
        }
        let mut latencies: Vec<Duration> = samples.into_iter().flat_map(|s| s.latencies).collect();
        latencies.sort_unstable();
        let percentile = |q: f64| match latencies.len() {
            0 => Duration::ZERO,
            n => latencies[((n - 1) as f64 * q).round() as usize],
        };
        Stats {
            rate: latencies.len() as f64 / (window.until - window.counted_from).as_secs_f64(),
            p50: percentile(0.50),
            p99: percentile(0.99),
            errors,
            cpu,
        }
    }
}

/// Runs `op` in a loop on every client concurrently, until the window closes.
/// All clients share this (single) thread: it keeps the load generator light.
async fn measure_http<'a, F, Fut>(clients: &'a [HttpClient], args: &Args, op: F) -> Stats
where
    F: Fn(&'a HttpClient) -> Fut,
    Fut: Future<Output = Result<(), String>> + 'a,
{
    let window = Window::starting_now(args);
    let cpu_from = CpuTime::now();
    let runs = clients.iter().map(|client| {
        let op = &op;
        async move {
            let mut samples = Samples::default();
            loop {
                let start = Instant::now();
                if start >= window.until {
                    return samples;
                }
                samples.record(&window, start, op(client).await);
            }
        }
    });
    let samples = futures_util::future::join_all(runs).await;
    Stats::of(&window, samples, cpu_from)
}

/// A unit of raw SQL work of one client, on the connection it holds.
type RawOp = fn(&mut DbConn, &Editor, Duration) -> Result<(), String>;

/// Raw SQL (`op`: a lock cycle, or a guarded update) on one blocking thread
/// per client, each on a connection it holds for the whole run (as pgbench
/// does: no pool, no check-out).
async fn measure_raw(
    state: &AppState,
    editors: &[Editor],
    args: &Args,
    ttl: Duration,
    op: RawOp,
) -> Result<Stats, BoxError> {
    let url = state.settings.database.database_url.clone();
    let editors = editors.to_vec();
    let window = Window::starting_now(args);
    let cpu_from = CpuTime::now();
    let samples = tokio::task::spawn_blocking(move || {
        std::thread::scope(|scope| {
            let threads: Vec<_> = editors
                .iter()
                .map(|editor| {
                    let url = &url;
                    scope.spawn(move || {
                        let mut conn = baton::db::connect(url).expect("a raw SQL connection");
                        let mut samples = Samples::default();
                        loop {
                            let start = Instant::now();
                            if start >= window.until {
                                // The connection too: PostgreSQL's CPU time
                                // is read while its backend still runs.
                                return (samples, conn);
                            }
                            let cycle = op(&mut conn, editor, ttl);
                            samples.record(&window, start, cycle);
                        }
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|t| t.join().expect("raw SQL client panicked"))
                .collect::<Vec<_>>()
        })
    })
    .await?;
    let (samples, connections): (Vec<Samples>, Vec<DbConn>) = samples.into_iter().unzip();
    let stats = Stats::of(&window, samples, cpu_from);
    drop(connections);
    Ok(stats)
}

// ---- the clients ----

/// One browser tab: its own user, session and keep-alive connection.
struct HttpClient {
    http: reqwest::Client,
    lock_url: String,
    lock_body: String,
    record_url: String,
    /// `PATCH /<plural>/:id`, for messages.
    patch_what: String,
    body_key: &'static str,
    field: &'static str,
    base: String,
    /// The team's backend: its API key, and the question it asks.
    backend: reqwest::Client,
    guard_body: String,
}

#[derive(Deserialize)]
struct LockReply {
    id: i64,
}

impl HttpClient {
    fn new(base: &str, target: &Target, editor: &Editor) -> Result<HttpClient, BoxError> {
        let ty = target.ty;
        Ok(HttpClient {
            http: tab_client(
                &editor.token,
                &editor.session_id,
                reqwest::Client::builder(),
            )?,
            lock_url: format!("{base}/locks"),
            lock_body: serde_json::json!({
                "lock": { "lockableType": ty.name, "lockableParam": editor.record_id.to_string() }
            })
            .to_string(),
            record_url: format!("{base}/{}/{}", ty.plural, editor.record_id),
            patch_what: format!("PATCH /{}/:id", ty.plural),
            body_key: ty.body_key.as_str(),
            field: target.field,
            base: base.to_owned(),
            backend: tab_client(
                &editor.api_key,
                &editor.session_id,
                reqwest::Client::builder(),
            )?,
            guard_body: serde_json::json!({
                "lockableType": ty.name,
                "lockableParam": editor.record_id.to_string(),
                "case": "bench",
                "userExternalId": editor.external_id,
                "sessionId": editor.session_id,
            })
            .to_string(),
        })
    }

    /// `POST /guard` (204) about the client's record, from the team's
    /// backend: nobody holds it, so the guard passes.
    async fn guard(&self) -> Result<(), String> {
        let response = self
            .backend
            .post(format!("{}/guard", self.base))
            .body(self.guard_body.clone())
            .send()
            .await
            .map_err(|e| format!("POST /guard: {e}"))?;
        expect(response, StatusCode::NO_CONTENT, "POST /guard").await?;
        Ok(())
    }

    /// `POST /locks` (201) then `DELETE /locks/:id` (204).
    async fn lock_cycle(&self) -> Result<(), String> {
        let response = self
            .http
            .post(&self.lock_url)
            .body(self.lock_body.clone())
            .send()
            .await
            .map_err(|e| format!("POST /locks: {e}"))?;
        let response = expect(response, StatusCode::CREATED, "POST /locks").await?;
        let lock: LockReply = response
            .json()
            .await
            .map_err(|e| format!("POST /locks: {e}"))?;
        let response = self
            .http
            .delete(format!("{}/locks/{}", self.base, lock.id))
            .send()
            .await
            .map_err(|e| format!("DELETE /locks/{}: {e}", lock.id))?;
        expect(response, StatusCode::NO_CONTENT, "DELETE /locks/:id").await?;
        Ok(())
    }

    /// `PATCH /<plural>/:id` (200) of one string field: no lock is held, so
    /// the guard checks and passes.
    async fn patch_record(&self) -> Result<(), String> {
        let what = &self.patch_what;
        let mut fields = Map::new();
        fields.insert(self.field.to_owned(), Value::from(edit_text()));
        let mut body = Map::new();
        body.insert(self.body_key.to_owned(), Value::Object(fields));
        let response = self
            .http
            .patch(&self.record_url)
            .body(Value::Object(body).to_string())
            .send()
            .await
            .map_err(|e| format!("{what}: {e}"))?;
        let response = expect(response, StatusCode::OK, what).await?;
        // Read the body to the end so the connection is reused.
        response.bytes().await.map_err(|e| format!("{what}: {e}"))?;
        Ok(())
    }
}

/// The response if it has the expected status, else an error with its body.
async fn expect(
    response: reqwest::Response,
    status: StatusCode,
    what: &str,
) -> Result<reqwest::Response, String> {
    if response.status() == status {
        return Ok(response);
    }
    let got = response.status();
    let body = response.text().await.unwrap_or_default();
    Err(format!("{what}: expected {status}, got {got}: {body}"))
}

/// What `POST /locks` + `DELETE /locks/:id` cost the database at the least:
/// the insert against the unique index and the delete, each its own
/// (autocommitted) statement on a connection checked out for it, as each
/// HTTP request checks out its own.
fn raw_lock_cycle(conn: &mut DbConn, editor: &Editor, ttl: Duration) -> Result<(), String> {
    let now = clock::now();
    let new = NewLock {
        lockable_type: editor.record_type,
        lockable_id: editor.record_id.get(),
        case_id: editor.case_id,
        user_id: editor.user_id,
        session_id: Some(&editor.session_id),
        user_agent: None,
        created_at: now,
        expires_at: clock::after(now, ttl),
        last_activity_at: now,
        deep: false,
        lockable_param: None,
    };
    let id = {
        let insert = diesel::insert_into(locks::table)
            .values(&new)
            .on_conflict_do_nothing()
            .returning(locks::id);
        // ON CONFLICT cannot run through the `DbConn` enum: use the inner connection.
        match conn {
            DbConn::Postgresql(c) => insert.get_result::<i64>(c).optional(),
            DbConn::Sqlite(c) => insert.get_result::<i64>(c).optional(),
        }
        .map_err(|e| format!("INSERT INTO locks: {e}"))?
        .ok_or_else(|| {
            format!(
                "{} {} was already locked",
                editor.record_type, editor.record_id
            )
        })?
    };
    match diesel::delete(locks::table.find(id)).execute(conn) {
        Ok(1) => Ok(()),
        Ok(n) => Err(format!("DELETE FROM locks deleted {n} rows")),
        Err(e) => Err(format!("DELETE FROM locks: {e}")),
    }
}

/// What a guarded `PATCH /<plural>/:id` costs the database at the least: in
/// one transaction, the record's row locked, the lock check (`FOR SHARE`,
/// none found) and the versioned UPDATE of its fields.
fn raw_guarded_update(conn: &mut DbConn, editor: &Editor, _ttl: Duration) -> Result<(), String> {
    let update = |c: &mut DbConn| -> QueryResult<()> {
        let key = (editor.record_type, editor.record_id);
        let found: Option<i64> = match c {
            DbConn::Postgresql(pg) => records::table
                .find(key)
                .select(records::version)
                .for_no_key_update()
                .get_result(pg)
                .optional()?,
            DbConn::Sqlite(lite) => records::table
                .find(key)
                .select(records::version)
                .get_result(lite)
                .optional()?,
        };
        found.ok_or(diesel::result::Error::NotFound)?;
        if Lock::on_for_share(c, editor.record_type, editor.record_id.get())?.is_some() {
            return Err(diesel::result::Error::RollbackTransaction);
        }
        let mut fields = editor.fields.clone();
        fields.insert(editor.field.to_owned(), Value::from(edit_text()));
        diesel::update(records::table.find(key))
            .set((
                records::fields.eq(Value::Object(fields).to_string()),
                records::version.eq(records::version + 1),
                records::updated_at.eq(clock::now()),
            ))
            .execute(c)
            .map(|_| ())
    };
    // As baton does: on SQLite, take the write lock at BEGIN.
    let begin = match conn {
        DbConn::Postgresql(_) => "BEGIN",
        DbConn::Sqlite(_) => "BEGIN IMMEDIATE",
    };
    let done = conn.batch_execute(begin).and_then(|()| {
        let outcome = update(conn);
        let end = if outcome.is_ok() {
            "COMMIT"
        } else {
            "ROLLBACK"
        };
        conn.batch_execute(end).and(outcome)
    });
    done.map_err(|e| format!("guarded update: {e}"))
}

/// pgbench's own figure for the raw lock cycle, when pgbench is installed:
/// the same two statements on the same table, each client on its editor's
/// record. `None` (with a note) when it cannot run.
fn pgbench(url: &str, editors: &[Editor], args: &Args) -> Option<f64> {
    let first = editors.first()?;
    let consecutive = editors.iter().enumerate().all(|(i, e)| {
        e.record_id.get() == first.record_id.get() + i as i64
            && e.user_id.get() == first.user_id.get() + i as i64
    });
    if !consecutive {
        eprintln!("pgbench skipped: the seeded records or users are not numbered consecutively");
        return None;
    }
    let script = format!(
        "\\set record :client_id + {record}\n\\set user :client_id + {user}\n\
         INSERT INTO locks (lockable_type, lockable_id, case_id, user_id, session_id, created_at, \
           expires_at, last_activity_at) VALUES ('{ty}', :record, {case}, :user, 'pgbench', \
           now(), now() + interval '1 minute', now()) ON CONFLICT DO NOTHING RETURNING id \\gset\n\
         DELETE FROM locks WHERE id = :id;\n",
        record = first.record_id,
        ty = first.record_type,
        user = first.user_id,
        case = first.case_id,
    );
    let file = tempfile::NamedTempFile::new().ok()?;
    std::fs::write(file.path(), script).ok()?;
    let seconds = (args.warmup + args.duration).as_secs().max(1);
    let output = std::process::Command::new("pgbench")
        .args(["-n", "-M", "prepared", "-j", "2"])
        .args(["-c", &editors.len().to_string(), "-T", &seconds.to_string()])
        .arg("-f")
        .arg(file.path())
        .arg(url)
        .output();
    let output = match output {
        Ok(output) if output.status.success() => output,
        Ok(output) => {
            eprintln!(
                "pgbench failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
            return None;
        }
        // Not installed: nothing to print.
        Err(_) => return None,
    };
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| {
            line.strip_prefix("tps = ")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
}

// ---- output ----

struct Row {
    backend: &'static str,
    clients: usize,
    lock: Stats,
    patch: Stats,
    /// `POST /guard` about the same records.
    guard: Stats,
    raw: Stats,
    raw_patch: Stats,
    /// pgbench's cycles/s for the raw lock cycle, when it ran.
    pgbench: Option<f64>,
    floor: Floor,
}

/// The HTTP floor's figures for the same requests, in the same run
/// (`support/floor.rs`): what any lock service on actix-web spends at least.
struct Floor {
    lock: Stats,
    patch: Stats,
    guard: Stats,
}

impl Row {
    fn errors(&self) -> u64 {
        self.lock.errors
            + self.patch.errors
            + self.guard.errors
            + self.raw.errors
            + self.raw_patch.errors
            + self.floor.lock.errors
            + self.floor.patch.errors
            + self.floor.guard.errors
    }

    /// HTTP lock cycles per raw SQL lock cycle.
    fn ratio(&self) -> f64 {
        rate_ratio(&self.lock, &self.raw)
    }

    /// Guarded PATCHes over HTTP per raw guarded update.
    fn patch_ratio(&self) -> f64 {
        rate_ratio(&self.patch, &self.raw_patch)
    }

    /// baton's rate of each request over the floor's: lock cycle, PATCH, guard.
    fn floor_ratios(&self) -> (f64, f64, f64) {
        (
            rate_ratio(&self.lock, &self.floor.lock),
            rate_ratio(&self.patch, &self.floor.patch),
            rate_ratio(&self.guard, &self.floor.guard),
        )
    }

    fn print(&self) {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let pgbench = self
            .pgbench
            .map_or_else(|| "-".to_owned(), |tps| format!("{tps:.0}"));
        let (lock_floor, patch_floor, guard_floor) = self.floor_ratios();
        println!(
            "| {:<10} | {:>7} | {:>9.0} | {:>6.2} | {:>6.2} | {:>9.0} | {:>6.2} | {:>6.2} | {:>9.0} | {:>6.2} | {:>6.2} | {:>9.0} | {:>6.2} | {:>6.2} | {:>7} | {:>8.2} | {:>9.0} | {:>9.2} | {:>10.0} | {:>10.2} | {:>11.0} | {:>11.2} | {:>11.0} | {:>11.2} | {:>6} |",
            self.backend,
            self.clients,
            self.lock.rate,
            ms(self.lock.p50),
            ms(self.lock.p99),
            self.patch.rate,
            ms(self.patch.p50),
            ms(self.patch.p99),
            self.guard.rate,
            ms(self.guard.p50),
            ms(self.guard.p99),
            self.raw.rate,
            ms(self.raw.p50),
            ms(self.raw.p99),
            pgbench,
            self.ratio(),
            self.raw_patch.rate,
            self.patch_ratio(),
            self.floor.lock.rate,
            lock_floor,
            self.floor.patch.rate,
            patch_floor,
            self.floor.guard.rate,
            guard_floor,
            self.errors(),
        );
    }
}

fn rate_ratio(http: &Stats, raw: &Stats) -> f64 {
    if raw.rate > 0.0 {
        http.rate / raw.rate
    } else {
        0.0
    }
}

fn print_header() {
    println!(
        "| backend    | clients | HTTP lock | p50    | p99    | PATCH     | p50    | p99    | guard     | p50    | p99    | raw SQL   | p50    | p99    | pgbench | HTTP/raw | raw PATCH | PATCH/raw | floor lock | lock/floor | floor PATCH | PATCH/floor | floor guard | guard/floor | errors |"
    );
    println!(
        "| ---------- | ------: | --------: | -----: | -----: | --------: | -----: | -----: | --------: | -----: | -----: | --------: | -----: | -----: | ------: | -------: | --------: | --------: | ---------: | ---------: | ----------: | ----------: | ----------: | ----------: | -----: |"
    );
}

/// CPU time per operation of each measurement, baton's beside the floor's
/// and the raw SQL's: where the gap between baton and the floor goes.
fn print_cpu(rows: &[Row]) {
    println!();
    println!(
        "CPU per operation, µs (process: this one, with the server, the floor and the load \
         generator; PostgreSQL: all its processes):\n"
    );
    println!(
        "| backend    | clients | operation   | baton process | baton PostgreSQL | floor process | floor PostgreSQL | raw SQL process | raw SQL PostgreSQL |"
    );
    println!(
        "| ---------- | ------: | ----------- | ------------: | ---------------: | ------------: | ---------------: | --------------: | -----------------: |"
    );
    for row in rows {
        let measured = [
            ("lock cycle", &row.lock, &row.floor.lock, Some(&row.raw)),
            ("PATCH", &row.patch, &row.floor.patch, Some(&row.raw_patch)),
            ("POST /guard", &row.guard, &row.floor.guard, None),
        ];
        for (what, baton, floor, raw) in measured {
            let (raw_process, raw_postgres) = raw.map_or_else(
                || ("-".to_owned(), "-".to_owned()),
                |raw| {
                    (
                        format!("{:.0}", raw.cpu.process),
                        format!("{:.0}", raw.cpu.postgres),
                    )
                },
            );
            println!(
                "| {:<10} | {:>7} | {:<11} | {:>13.0} | {:>16.0} | {:>13.0} | {:>16.0} | {:>15} | {:>18} |",
                row.backend,
                row.clients,
                what,
                baton.cpu.process,
                baton.cpu.postgres,
                floor.cpu.process,
                floor.cpu.postgres,
                raw_process,
                raw_postgres,
            );
        }
    }
}

/// The project's speed targets (16 clients), for the rows that were measured.
fn print_targets(rows: &[Row], measured: &Target) {
    let verdict = |met: bool| if met { "met" } else { "MISSED" };
    let target = |what: String, value: f64, met: bool| {
        println!("target {what}: {value:.2} ({})", verdict(met));
    };
    println!();
    println!(
        "measured: schema {}, type {}",
        measured.schema_name, measured.ty.name
    );
    for row in rows.iter().filter(|r| r.clients == 16) {
        let name = row.backend;
        // Against the floor: what is left is baton's own work per request.
        let lock_target = if name == "PostgreSQL" { 0.7 } else { 0.8 };
        let (lock, patch, guard) = row.floor_ratios();
        target(
            format!("{name}: HTTP lock cycles / floor's >= {lock_target}"),
            lock,
            lock >= lock_target,
        );
        target(
            format!("{name}: guarded PATCH / floor's >= 0.7"),
            patch,
            patch >= 0.7,
        );
        target(
            format!("{name}: POST /guard / floor's >= 0.8"),
            guard,
            guard >= 0.8,
        );
        for (what, stats) in [("lock", &row.lock), ("PATCH", &row.patch)] {
            let spread = stats.p99.as_secs_f64() / stats.p50.as_secs_f64().max(1e-9);
            target(
                format!("{name}: {what} p99 / p50 <= 3"),
                spread,
                spread <= 3.0,
            );
        }
    }
}
