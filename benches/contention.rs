//! Contention benchmark: claims and lock sets under many clients racing for
//! the same records, over HTTP.
//!
//! ```text
//! cargo bench --bench contention
//! cargo bench --bench contention -- --backend postgres --duration 10s
//! ```
//!
//! - **claims**: every client loops `POST /locks/claim` over the same
//!   candidates (all cards of one case, in the same order: everybody wants
//!   the first), then `DELETE /locks/:id`. Every claim must answer 201.
//! - **sets**: every client loops `POST /locks/batch` over a window of
//!   consecutive cards of a small pool (windows overlap), half the clients
//!   asking in ascending and half in descending order; a granted set is
//!   released at once (`DELETE /locks?session=mine`). Answers are 201 or
//!   409; any 5xx fails the run.
//!
//! Every client is its own tab; two clients share each user. PostgreSQL
//! runs in a scratch database `baton_bench_<random>` created on
//! `BATON_BENCH_POSTGRES_URL` and dropped at the end.

#[path = "support/backends.rs"]
mod backends;
mod support;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use backends::Backends;
use baton::auth::{password, tokens};
use baton::config::Settings;
use baton::db::DbError;
use baton::error::AppError;
use baton::models::Role;
use baton::models::{Case, Membership, User};
use baton::server;
use baton::state::AppState;
use clap::Parser;
use reqwest::StatusCode;
use serde::Deserialize;
use support::tab_client;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const JWT_SECRET: &[u8] = b"baton-bench-secret-baton-bench-secret";

#[derive(Parser)]
#[command(about = "Claims and opposite-order lock sets per second under contention")]
struct Args {
    /// Which database backends to measure.
    #[arg(long, env = "BATON_BENCH_BACKEND", value_enum, default_value_t = Backends::All)]
    backend: Backends,

    /// How long each measurement runs, after the warm-up.
    #[arg(long, env = "BATON_BENCH_DURATION", default_value = "5s", value_parser = humantime::parse_duration)]
    duration: Duration,

    /// Load before each measurement that is not counted.
    #[arg(long, env = "BATON_BENCH_WARMUP", default_value = "500ms", value_parser = humantime::parse_duration)]
    warmup: Duration,

    /// Concurrent clients (tabs) of each measurement.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(2..))]
    clients: u16,

    /// Candidates of every claim: the cards of the bench case.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..=100))]
    candidates: u16,

    /// Cards every lock set asks for.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=50))]
    set_size: u16,

    /// Cards the sets' windows are taken from (at least the set size).
    #[arg(long, default_value_t = 8)]
    set_pool: u16,

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
    if args.set_pool < args.set_size || args.set_pool > args.candidates {
        eprintln!("--set-pool must be between --set-size and --candidates");
        std::process::exit(2);
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "contention: {} clients, {:?} per measurement after {:?} warm-up; 2 HTTP workers; \
         {cpus} CPUs. claims: {} candidates, claim + release per cycle; sets: {} cards out of \
         {}, half ascending, half descending. Latencies in ms.\n",
        args.clients, args.duration, args.warmup, args.candidates, args.set_size, args.set_pool
    );
    print_header();

    let mut rows = Vec::new();
    let mut failed = false;
    let runs = backends::on_each(
        args.backend,
        &args.postgres_url,
        "baton_bench",
        |name, url, pool| run_backend(name, url, pool, &args),
    );
    for (name, outcome) in runs {
        match outcome {
            Ok(mut r) => rows.append(&mut r),
            Err(e) => {
                eprintln!("{name} run failed: {e}");
                failed = true;
            }
        }
    }

    let server_errors: u64 = rows.iter().map(|r| r.tally.server_errors).sum();
    let other: u64 = rows.iter().map(|r| r.tally.unexpected).sum();
    if server_errors > 0 {
        eprintln!("{server_errors} requests answered 5xx: baton failed under contention.");
    }
    if other > 0 {
        eprintln!("{other} requests failed or answered unexpectedly; the figures are not valid.");
    }
    if failed || server_errors > 0 || other > 0 {
        std::process::exit(1);
    }
}

// ---- one backend ----

/// Starts baton on `database_url`, seeds it and runs both measurements in
/// their own actix system, so the server and its reaper stop with it.
fn run_backend(
    name: &'static str,
    database_url: &str,
    pool_size: u32,
    args: &Args,
) -> Result<Vec<Row>, BoxError> {
    let mut settings = Settings::defaults(database_url);
    settings.workers = Some(2);
    settings.database.db_pool_size = pool_size;
    let clients = usize::from(args.clients);
    let candidates = usize::from(args.candidates);

    actix_web::rt::System::new().block_on(async move {
        let state = server::build_state(settings, JWT_SECRET)?;
        let seeded = seed(&state, clients, candidates).await?;
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let base = format!("http://{}", listener.local_addr()?);
        let server = server::start(state.clone(), listener)?;
        let handle = server.handle();
        actix_web::rt::spawn(server);

        let tabs = seeded
            .tabs
            .iter()
            .map(|(token, session)| Tab::new(&base, token, session))
            .collect::<Result<Vec<_>, _>>()?;
        let mut rows = Vec::new();

        let claim_body =
            serde_json::json!({ "claim": { "candidates": records(&seeded.cards) } }).to_string();
        let claims = measure(&tabs, args, |tab, _| tab.claim_cycle(&claim_body)).await;
        let row = Row {
            backend: name,
            what: "claims",
            tally: claims,
        };
        row.print();
        rows.push(row);

        let sets = SetPlan::new(&seeded.cards, args);
        let opposite = measure(&tabs, args, |tab, (client, round)| {
            tab.set_cycle(sets.body(client, round))
        })
        .await;
        let row = Row {
            backend: name,
            what: "sets",
            tally: opposite,
        };
        row.print();
        rows.push(row);

        handle.stop(false).await;
        Ok(rows)
    })
}

/// The bench case's cards, and one (token, session) per client.
struct Seeded {
    cards: Vec<i64>,
    tabs: Vec<(String, String)>,
}

/// One case with one page of `cards` cards, and a tab per client (two tabs
/// per editor).
async fn seed(state: &AppState, clients: usize, cards: usize) -> Result<Seeded, BoxError> {
    let password_hash = password::hash("bench")?;
    let editors = clients.div_ceil(2);
    let (users, card_ids) = state
        .db
        .write(None, move |tx| {
            let case = Case::create(
                tx.conn,
                "contention",
                "Contention",
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
            let mut card_ids = Vec::with_capacity(cards);
            for i in 0..cards {
                let card = support::plant(
                    tx,
                    "Card",
                    case.id,
                    Some(page),
                    Some(i as i32),
                    serde_json::json!({"content": ""}),
                )?;
                card_ids.push(card);
            }
            let mut users = Vec::with_capacity(editors);
            for i in 0..editors {
                let user = User::create(
                    tx.conn,
                    &format!("contender{i}@bench.invalid"),
                    &format!("Contender {i}"),
                    &password_hash,
                    false,
                    tx.now,
                )?;
                Membership::create(tx.conn, case.id, user.id, Role::Editor, tx.now)?;
                users.push(user.id);
            }
            Ok::<_, DbError>((users, card_ids))
        })
        .await?;
    let jwt = state.jwt.clone();
    let tokens = state
        .db
        .write(None, move |tx| {
            users
                .into_iter()
                .map(|user| tokens::issue(tx.conn, &jwt, user, tx.now))
                .collect::<Result<Vec<_>, AppError>>()
        })
        .await?;
    let tabs = (0..clients)
        .map(|i| (tokens[i / 2].clone(), uuid::Uuid::new_v4().to_string()))
        .collect();
    Ok(Seeded {
        cards: card_ids,
        tabs,
    })
}

fn records(cards: &[i64]) -> Vec<serde_json::Value> {
    cards
        .iter()
        .map(|id| serde_json::json!({ "lockableType": "Card", "lockableParam": id.to_string() }))
        .collect()
}

/// The sets the clients ask for: windows of consecutive cards of the pool,
/// each window in ascending order for even clients and descending for odd.
struct SetPlan {
    /// Per window start: (ascending body, descending body).
    windows: Vec<(String, String)>,
}

impl SetPlan {
    fn new(cards: &[i64], args: &Args) -> SetPlan {
        let pool = &cards[..usize::from(args.set_pool)];
        let size = usize::from(args.set_size);
        let windows = pool
            .windows(size)
            .map(|window| {
                let up = serde_json::json!({ "locks": records(window) }).to_string();
                let mut reversed = window.to_vec();
                reversed.reverse();
                let down = serde_json::json!({ "locks": records(&reversed) }).to_string();
                (up, down)
            })
            .collect();
        SetPlan { windows }
    }

    /// The body of a client's `round`-th set: its window moves on every
    /// round, clients out of step, so windows overlap in every way.
    fn body(&self, client: usize, round: u64) -> &str {
        let window = &self.windows[(client / 2 + round as usize) % self.windows.len()];
        if client.is_multiple_of(2) {
            &window.0
        } else {
            &window.1
        }
    }
}

// ---- measuring ----

/// When a measurement counts: requests started in `[counted_from, until)`.
#[derive(Clone, Copy)]
struct Window {
    counted_from: Instant,
    until: Instant,
}

/// What happened to one cycle.
enum Outcome {
    /// Locked (and released): 201.
    Granted,
    /// 409: someone else held a record of the set.
    Refused,
}

/// Answers of one measurement, all clients together.
#[derive(Default)]
struct Tally {
    granted: u64,
    refused: u64,
    server_errors: u64,
    unexpected: u64,
    latencies: Vec<Duration>,
    seconds: f64,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.granted += other.granted;
        self.refused += other.refused;
        self.server_errors += other.server_errors;
        self.unexpected += other.unexpected;
        self.latencies.extend(other.latencies);
    }

    fn percentile(&self, q: f64) -> Duration {
        match self.latencies.len() {
            0 => Duration::ZERO,
            n => self.latencies[((n - 1) as f64 * q).round() as usize],
        }
    }

    fn rate(&self, count: u64) -> f64 {
        if self.seconds > 0.0 {
            count as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// Why a cycle failed.
enum Failure {
    Server(String),
    Unexpected(String),
}

/// Runs `op` in a loop on every client concurrently until the window
/// closes; counts what started inside the window (failures always).
async fn measure<'a, F, Fut>(tabs: &'a [Tab], args: &Args, op: F) -> Tally
where
    F: Fn(&'a Tab, (usize, u64)) -> Fut,
    Fut: std::future::Future<Output = Result<(Outcome, Duration), Failure>> + 'a,
{
    let counted_from = Instant::now() + args.warmup;
    let window = Window {
        counted_from,
        until: counted_from + args.duration,
    };
    let runs = tabs.iter().enumerate().map(|(client, tab)| {
        let op = &op;
        async move {
            let mut tally = Tally::default();
            let mut first_failure = None;
            let mut round = 0u64;
            loop {
                let start = Instant::now();
                if start >= window.until {
                    return (tally, first_failure);
                }
                let counted = start >= window.counted_from;
                match op(tab, (client, round)).await {
                    Ok((outcome, latency)) if counted => {
                        match outcome {
                            Outcome::Granted => tally.granted += 1,
                            Outcome::Refused => tally.refused += 1,
                        }
                        tally.latencies.push(latency);
                    }
                    Ok(_) => {}
                    Err(Failure::Server(e)) => {
                        tally.server_errors += 1;
                        first_failure.get_or_insert(e);
                    }
                    Err(Failure::Unexpected(e)) => {
                        tally.unexpected += 1;
                        first_failure.get_or_insert(e);
                    }
                }
                round += 1;
            }
        }
    });
    let mut total = Tally::default();
    for (tally, failure) in futures_util::future::join_all(runs).await {
        if let Some(e) = failure {
            eprintln!("first failure of a client: {e}");
        }
        total.add(tally);
    }
    total.latencies.sort_unstable();
    total.seconds = (window.until - window.counted_from).as_secs_f64();
    total
}

// ---- the clients ----

/// One browser tab on its keep-alive connection.
struct Tab {
    http: reqwest::Client,
    base: String,
}

#[derive(Deserialize)]
struct LockReply {
    id: i64,
}

impl Tab {
    fn new(base: &str, token: &str, session: &str) -> Result<Tab, BoxError> {
        Ok(Tab {
            http: tab_client(token, session, reqwest::Client::builder())?,
            base: base.to_owned(),
        })
    }

    /// `POST /locks/claim` (201; the latency measured) then
    /// `DELETE /locks/:id` (204).
    async fn claim_cycle(&self, body: &str) -> Result<(Outcome, Duration), Failure> {
        let start = Instant::now();
        let response = self
            .http
            .post(format!("{}/locks/claim", self.base))
            .body(body.to_owned())
            .send()
            .await
            .map_err(|e| Failure::Unexpected(format!("POST /locks/claim: {e}")))?;
        let latency = start.elapsed();
        let response = expect(response, StatusCode::CREATED, "POST /locks/claim").await?;
        let lock: LockReply = response
            .json()
            .await
            .map_err(|e| Failure::Unexpected(format!("POST /locks/claim: {e}")))?;
        let response = self
            .http
            .delete(format!("{}/locks/{}", self.base, lock.id))
            .send()
            .await
            .map_err(|e| Failure::Unexpected(format!("DELETE /locks/{}: {e}", lock.id)))?;
        expect(response, StatusCode::NO_CONTENT, "DELETE /locks/:id").await?;
        Ok((Outcome::Granted, latency))
    }

    /// `POST /locks/batch` (the latency measured): 201, then
    /// `DELETE /locks?session=mine` (204); or 409.
    async fn set_cycle(&self, body: &str) -> Result<(Outcome, Duration), Failure> {
        let start = Instant::now();
        let response = self
            .http
            .post(format!("{}/locks/batch", self.base))
            .body(body.to_owned())
            .send()
            .await
            .map_err(|e| Failure::Unexpected(format!("POST /locks/batch: {e}")))?;
        let latency = start.elapsed();
        if response.status() == StatusCode::CONFLICT {
            response
                .bytes()
                .await
                .map_err(|e| Failure::Unexpected(format!("POST /locks/batch: {e}")))?;
            return Ok((Outcome::Refused, latency));
        }
        let response = expect(response, StatusCode::CREATED, "POST /locks/batch").await?;
        response
            .bytes()
            .await
            .map_err(|e| Failure::Unexpected(format!("POST /locks/batch: {e}")))?;
        let response = self
            .http
            .delete(format!("{}/locks?session=mine", self.base))
            .send()
            .await
            .map_err(|e| Failure::Unexpected(format!("DELETE /locks?session=mine: {e}")))?;
        expect(
            response,
            StatusCode::NO_CONTENT,
            "DELETE /locks?session=mine",
        )
        .await?;
        Ok((Outcome::Granted, latency))
    }
}

/// The response if it has the expected status, else why not.
async fn expect(
    response: reqwest::Response,
    status: StatusCode,
    what: &str,
) -> Result<reqwest::Response, Failure> {
    if response.status() == status {
        return Ok(response);
    }
    let got = response.status();
    let body = response.text().await.unwrap_or_default();
    let message = format!("{what}: expected {status}, got {got}: {body}");
    if got.is_server_error() {
        Err(Failure::Server(message))
    } else {
        Err(Failure::Unexpected(message))
    }
}

// ---- output ----

struct Row {
    backend: &'static str,
    what: &'static str,
    tally: Tally,
}

impl Row {
    fn print(&self) {
        let t = &self.tally;
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "| {:<10} | {:<6} | {:>10.0} | {:>9.0} | {:>9.0} | {:>8} | {:>8} | {:>6.2} | {:>6.2} | {:>7.2} | {:>3} | {:>6} |",
            self.backend,
            self.what,
            t.rate(t.granted + t.refused),
            t.rate(t.granted),
            t.rate(t.refused),
            t.granted,
            t.refused,
            ms(t.percentile(0.50)),
            ms(t.percentile(0.99)),
            ms(t.percentile(1.0)),
            t.server_errors,
            t.unexpected,
        );
    }
}

fn print_header() {
    println!(
        "| backend    | what   | requests/s | granted/s | refused/s | 201      | 409      | p50    | p99    | max     | 5xx | errors |"
    );
    println!(
        "| ---------- | ------ | ---------: | --------: | --------: | -------: | -------: | -----: | -----: | ------: | --: | -----: |"
    );
}
