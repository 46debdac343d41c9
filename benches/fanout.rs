//! Fan-out benchmark: how long one edit takes to reach every open edits
//! channel of a case, and how much server memory an idle open channel costs.
//!
//! ```text
//! cargo bench --bench fanout
//! cargo bench --bench fanout -- latency --subscribers 100,1000 --updates 200
//! cargo bench --bench fanout -- memory --tabs 1000,10000
//! cargo bench --bench fanout -- memory --tabs 10000,50000,100000
//! cargo bench --bench fanout -- --database-url postgres://postgres@127.0.0.1:5432/test
//! cargo bench --bench fanout -- cross --database-url postgres://postgres@127.0.0.1:5432/test
//! cargo bench --bench fanout -- many --instances 6 --tabs-per-instance 16667 \
//!     --database-url postgres://postgres@127.0.0.1:5432/test
//! ```
//!
//! Everything runs against a real `baton serve` child process on 127.0.0.1,
//! the way it is deployed: its own address space (so its resident memory can
//! be read) and its own threads. The database is seeded through the library
//! before the server starts: a publisher (an editor) and `--readers` reader
//! users who are members of every case. Tab `i` belongs to reader
//! `i % readers`, so at 1,000 subscribers 50 people have 20 tabs each: this
//! keeps `onlineUsers` (sent in every welcome and presence frame) at the size
//! of a real class rather than a list of a thousand people.
//!
//! Latency: N subscribers hold the edits channel of one case and read
//! continuously; the publisher PATCHes a card with `content = "<seq>"` and
//! waits until every subscriber has seen that update (or a timeout) before
//! the next one. The figure per update is the latest receipt among the N
//! subscribers minus the instant the publisher had its HTTP response (zero if
//! every tab had it before the response).
//!
//! Cross (PostgreSQL only): two `baton serve` processes, A and B, on one
//! database. The publisher always edits through A; the subscribers are on A
//! (single instance) or on B (cross instance), measured as above on fresh
//! cases. Rounds alternate which route goes first so that drift in the
//! machine's load falls on both alike, and the samples of all rounds are
//! pooled per route.
//!
//! Memory: the server's VmRSS after start-up and a warm-up, then with 1,000
//! and 10,000 idle tabs (at most `--tabs-per-case` per case), which stay
//! connected and answer the server's pings. At each count the heartbeat's
//! cost is read too: the server's CPU time (utime + stime of
//! /proc/<pid>/stat) over `--beats` heartbeat intervals, and on PostgreSQL
//! the scratch database's transactions and rows written (pg_stat_database)
//! in that time, per interval. One source address has
//! only the ephemeral ports (some 28,000 by default), so tabs connect from
//! 127.0.0.2, 127.0.0.3, … in turn, `--tabs-per-address` each; the bench
//! and the server each need an open file per tab, and the bench raises its
//! own open-file limit (its hard one too, when it may), which the server inherits.
//!
//! Many (PostgreSQL only): `--instances` `baton serve` processes on one
//! database, `--tabs-per-instance` idle tabs each, on `--cases` cases (by
//! default one: every tab watches the case the publisher edits). A process
//! may hold only as many sockets as its open-file limit allows, the bench
//! too, so the tabs are held by child processes (this binary, run as
//! `fanout clients`), `--tabs-per-client` each, which report their receipts
//! on the clock all processes share (CLOCK_MONOTONIC). It reports each
//! instance's VmRSS over its baseline per tab, the connections to the
//! database (pg_stat_activity), and the fan-out of one update, PATCHed
//! through the first instance, to every tab on the case on every instance.
//!
//! SQLite runs in a temporary directory. With `--database-url` (or
//! `BATON_BENCH_POSTGRES_URL`) a scratch database `baton_fanout_<random>` is
//! created on that PostgreSQL server and dropped at the end.

mod support;

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use baton::auth::{password, tokens, JwtKeys};
use baton::db::schema::presences;
use baton::db::{Database, DbError};
use baton::error::AppError;
use baton::models::Role;
use baton::models::{Case, Membership, User};
use baton::realtime::hub::LocalBus;
use clap::{Parser, ValueEnum};
use diesel::pg::PgConnection;
use diesel::prelude::*;
use futures_util::{StreamExt, TryStreamExt};
use serde::Deserialize;
use support::{tab_client, ScratchPg};
use tokio::net::TcpSocket;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const JWT_SECRET: &str = "baton-fanout-bench-secret-baton-fanout";

/// The project's targets.
const TARGET_P99: Duration = Duration::from_millis(10);
const TARGET_P99_AT: usize = 1000;
const TARGET_KIB_PER_TAB: f64 = 40.0;

#[derive(Parser)]
#[command(about = "Edit fan-out latency and memory per idle tab of a real `baton serve`")]
struct Args {
    /// What to measure (default: latency and memory, plus cross on PostgreSQL).
    #[arg(value_enum)]
    parts: Vec<Part>,

    /// Subscriber counts for the latency part, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "100,1000")]
    subscribers: Vec<usize>,

    /// Measured updates per subscriber count.
    #[arg(long, default_value_t = 200)]
    updates: usize,

    /// Cross part: rounds per subscriber count, each measuring both routes
    /// (`--updates` per route per round).
    #[arg(long, default_value_t = 2)]
    rounds: usize,

    /// Updates sent first and not counted.
    #[arg(long, default_value_t = 5)]
    warmup_updates: usize,

    /// Pause between updates: edits are people typing, not a flood.
    #[arg(long, default_value = "20ms", value_parser = humantime::parse_duration)]
    pause: Duration,

    /// How long an update may take to reach every subscriber.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    timeout: Duration,

    /// Idle tab counts for the memory part, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
    tabs: Vec<usize>,

    /// Most idle tabs on one case (joins get dearer as a case fills up).
    #[arg(long, default_value_t = 1000)]
    tabs_per_case: usize,

    /// Tabs connecting from one loopback source address (127.0.0.2, then
    /// 127.0.0.3, …): one address has only the ephemeral port range, and a
    /// bind searches it for a free port, ever longer as it fills (at 20,000
    /// of its 28,000 ports the client processes spent most of their time in
    /// that search).
    #[arg(long, default_value_t = 4_000)]
    tabs_per_address: usize,

    /// The server's heartbeat interval (BATON_HEARTBEAT_INTERVAL).
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    heartbeat: Duration,

    /// Heartbeat intervals over which the memory part reads the server's
    /// CPU time and database activity at each tab count.
    #[arg(long, default_value_t = 3)]
    beats: u32,

    /// Reader users; tabs are dealt out to them in turn.
    #[arg(long, default_value_t = 50)]
    readers: usize,

    /// WebSocket handshakes in flight at once.
    #[arg(long, default_value_t = 200)]
    connect_concurrency: usize,

    /// Many part: `baton serve` instances on one PostgreSQL database.
    #[arg(long, default_value_t = 5)]
    instances: usize,

    /// Many part: idle tabs per instance.
    #[arg(long, default_value_t = 2000)]
    tabs_per_instance: usize,

    /// Many part: tabs per client process (each holds a socket per tab, and
    /// a process may hold no more than its open-file limit).
    #[arg(long, default_value_t = 15_000)]
    tabs_per_client: usize,

    /// Many part: cases the tabs are dealt out to in turn; the publisher
    /// edits the first (1: every tab gets every update).
    #[arg(long, default_value_t = 1)]
    cases: usize,

    /// Many part: each instance's pool (BATON_DB_POOL_SIZE): PostgreSQL's
    /// `max_connections` (100 by default) is shared by all instances.
    #[arg(long, default_value_t = 8)]
    pool_size: u32,

    /// A PostgreSQL server to run on (a scratch database is made there);
    /// SQLite in a temporary directory when absent.
    #[arg(long, env = "BATON_BENCH_POSTGRES_URL")]
    database_url: Option<String>,

    /// Passed by `cargo bench` to every bench binary; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Part {
    /// Fan-out latency on one server.
    Latency,
    /// Server memory per idle tab.
    Memory,
    /// Fan-out latency with the publisher on instance A and the subscribers
    /// on A or on B (PostgreSQL only).
    Cross,
    /// Several instances on one PostgreSQL database with many idle tabs:
    /// memory per tab, connections, and one update's fan-out to all.
    Many,
    /// A client process of the many part (started by it).
    #[value(hide = true)]
    Clients,
}

impl Args {
    fn runs(&self, part: Part) -> bool {
        if self.parts.is_empty() {
            return match part {
                Part::Latency | Part::Memory => true,
                Part::Cross => self.database_url.is_some(),
                Part::Many | Part::Clients => false,
            };
        }
        self.parts.contains(&part)
    }

    fn check(&mut self) -> Result<(), String> {
        self.tabs.sort_unstable();
        self.tabs.dedup();
        let zero = |v: &[usize]| v.contains(&0);
        if zero(&self.subscribers) || zero(&self.tabs) {
            return Err("--subscribers and --tabs: every count must be at least 1".into());
        }
        if self.updates == 0 || self.readers == 0 || self.tabs_per_case == 0 {
            return Err("--updates, --readers and --tabs-per-case must be at least 1".into());
        }
        if self.connect_concurrency == 0 {
            return Err("--connect-concurrency must be at least 1".into());
        }
        if self.tabs_per_address == 0 || self.beats == 0 {
            return Err("--tabs-per-address and --beats must be at least 1".into());
        }
        if self.sockets_needed().div_ceil(self.tabs_per_address) > 250 {
            return Err(
                "more than 250 source addresses (127.0.0.2 and on) would be needed: \
                        raise --tabs-per-address"
                    .into(),
            );
        }
        if self.rounds == 0 {
            return Err("--rounds must be at least 1".into());
        }
        if self.instances == 0 || self.tabs_per_instance == 0 || self.cases == 0 {
            return Err("--instances, --tabs-per-instance and --cases must be at least 1".into());
        }
        if self.parts.contains(&Part::Many) && self.database_url.is_none() {
            return Err(
                "many needs --database-url: its instances share a PostgreSQL database".into(),
            );
        }
        if self.parts.contains(&Part::Cross) && self.database_url.is_none() {
            return Err(
                "cross needs --database-url: several instances share a PostgreSQL \
                        database (SQLite serves one instance)"
                    .into(),
            );
        }
        Ok(())
    }

    /// Sockets the bench holds at once (the server holds as many).
    fn sockets_needed(&self) -> usize {
        let latency = self.subscribers.iter().max().copied().unwrap_or(0);
        let memory = self.tabs.last().copied().unwrap_or(0);
        let mut needed = 0;
        if self.runs(Part::Latency) || self.runs(Part::Cross) {
            needed = needed.max(latency);
        }
        if self.runs(Part::Memory) {
            needed = needed.max(memory);
        }
        // The many part's tabs are held by its client processes; it holds
        // a warm-up's few itself.
        if self.runs(Part::Many) {
            needed = needed.max(20 * self.instances);
        }
        needed
    }
}

fn main() {
    let mut args = Args::parse();
    if let Err(e) = args.check() {
        eprintln!("fanout: {e}");
        std::process::exit(2);
    }
    // Before anything is spawned: the server inherits the limit. The margin
    // is for the bench's own files (its database pool, the server's pipes).
    if let Err(e) = raise_open_file_limit(args.sockets_needed() as u64 + 64) {
        eprintln!("fanout: {e}");
        std::process::exit(2);
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("fanout: cannot start the tokio runtime: {e}");
            std::process::exit(1);
        }
    };
    if args.parts.contains(&Part::Clients) {
        if let Err(e) = runtime.block_on(clients_role()) {
            eprintln!("fanout clients: {e}");
            std::process::exit(1);
        }
        return;
    }
    if let Err(e) = runtime.block_on(run(&args)) {
        eprintln!("fanout: {e}");
        std::process::exit(1);
    }
}

async fn run(args: &Args) -> Result<(), BoxError> {
    let backend = match &args.database_url {
        Some(_) => "PostgreSQL",
        None => "SQLite",
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    println!(
        "fanout: baton serve on 127.0.0.1, {backend}, {cpus} CPUs (nproc), load average {load}; \
         {} reader users, tabs dealt out in turn.\n",
        args.readers
    );

    let mut failed = false;
    let mut latency = Vec::new();
    if args.runs(Part::Latency) {
        print_latency_header();
        latency = report(latency_part(args, backend).await, "latency", &mut failed);
    }
    let mut cross = Vec::new();
    if args.runs(Part::Cross) {
        print_cross_header();
        cross = report(cross_part(args).await, "cross", &mut failed);
    }
    let mut memory = Vec::new();
    if args.runs(Part::Memory) {
        print_memory_header();
        memory = report(memory_part(args, backend).await, "memory", &mut failed);
    }
    let mut many = None;
    if args.runs(Part::Many) {
        println!(
            "Many: {} instances on one PostgreSQL database, {} idle tabs each, on {} case(s); \
             the publisher edits through the first.\n",
            args.instances, args.tabs_per_instance, args.cases
        );
        print_latency_legend();
        match many_part(args).await {
            Ok(row) => {
                row.print();
                many = Some(row);
            }
            Err(e) => {
                eprintln!("many part failed: {e}");
                failed = true;
            }
        }
        println!();
    }
    print_targets(&latency, &cross, &memory);
    let problems = latency.iter().any(LatencyRow::incomplete)
        || many.as_ref().is_some_and(|m| m.latency.incomplete())
        || cross
            .iter()
            .any(|c| c.single.incomplete() || c.cross.incomplete())
        || memory.iter().any(|r| r.lost > 0);
    if failed || problems {
        return Err("some measurements failed or are incomplete; see above".into());
    }
    Ok(())
}

/// A part's rows, or none after saying why it failed (the other parts still run).
fn report<T>(outcome: Result<Vec<T>, BoxError>, part: &str, failed: &mut bool) -> Vec<T> {
    println!();
    outcome.unwrap_or_else(|e| {
        eprintln!("{part} part failed: {e}");
        *failed = true;
        Vec::new()
    })
}

// ---- the three parts ----

async fn latency_part(args: &Args, backend: &'static str) -> Result<Vec<LatencyRow>, BoxError> {
    let scratch = Scratch::create(args.database_url.as_deref())?;
    let db = open_db(&scratch.url)?;
    // One case per subscriber count, so each count starts on a quiet case.
    let seed = seed(&db, args.subscribers.len(), args.readers).await?;
    let server = Server::start(&scratch.url, args).await?;
    let publisher = Publisher::new(&server.http, &seed)?;

    let mut rows = Vec::new();
    for (case, &n) in seed.cases.iter().zip(&args.subscribers) {
        let row = fanout(args, &db, &publisher, &server, &seed, case, n).await?;
        row.print(backend);
        rows.push(row);
    }
    drop(server);
    Ok(rows)
}

async fn cross_part(args: &Args) -> Result<Vec<CrossRow>, BoxError> {
    let scratch = Scratch::create(args.database_url.as_deref())?;
    let db = open_db(&scratch.url)?;
    // A fresh case per count, round and route, so each starts quiet.
    let per_count = 2 * args.rounds;
    let seed = seed(&db, args.subscribers.len() * per_count, args.readers).await?;
    let a = Server::start(&scratch.url, args).await?;
    let b = Server::start(&scratch.url, args).await?;
    let publisher = Publisher::new(&a.http, &seed)?;

    let mut rows = Vec::new();
    for (i, &n) in args.subscribers.iter().enumerate() {
        let mut cases = seed.cases[i * per_count..(i + 1) * per_count].iter();
        let mut row = CrossRow {
            single: LatencyRow::new(n),
            cross: LatencyRow::new(n),
        };
        for round in 0..args.rounds {
            let mut routes = [(&a, &mut row.single), (&b, &mut row.cross)];
            if round % 2 == 1 {
                routes.reverse();
            }
            for (subscribers_server, pooled) in routes {
                let case = cases.next().ok_or("fewer seeded cases than rounds")?;
                let measured =
                    fanout(args, &db, &publisher, subscribers_server, &seed, case, n).await?;
                pooled.absorb(measured);
            }
        }
        row.single.print("PG, A to A");
        row.cross.print("PG, A to B");
        rows.push(row);
    }
    drop((a, b));
    Ok(rows)
}

async fn memory_part(args: &Args, backend: &'static str) -> Result<Vec<MemoryRow>, BoxError> {
    let most = args.tabs.last().copied().unwrap_or(0);
    let scratch = Scratch::create(args.database_url.as_deref())?;
    let db = open_db(&scratch.url)?;
    let seed = seed(&db, most.div_ceil(args.tabs_per_case), args.readers).await?;
    let server = Server::start(&scratch.url, args).await?;
    // The bench's own connection for reading PostgreSQL's statistics.
    let mut stats = match args.database_url {
        Some(_) => Some(
            PgConnection::establish(&scratch.url)
                .map_err(|e| format!("cannot connect to {}: {e}", scratch.url))?,
        ),
        None => None,
    };

    // Warm-up: a few tabs, edits and departures, so that lazily made things
    // (pool connections, blocking threads, buffers) count in the baseline.
    let publisher = Publisher::new(&server.http, &seed)?;
    let warm_urls = tab_specs(&server, &seed, 0..50, args);
    let warm = Tabs::open(warm_urls, args.connect_concurrency, None).await?;
    for seq in 1..=5 {
        publisher.update(&seed.cases[0], seq).await?;
    }
    drop(warm);
    wait_for_presences(&db, 0).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let baseline = server.rss_kib()?;

    let mut rows = Vec::new();
    let mut tabs = Vec::new();
    let mut open = 0;
    for &target in &args.tabs {
        let urls = tab_specs(&server, &seed, open..target, args);
        tabs.push(Tabs::open(urls, args.connect_concurrency, None).await?);
        open = target;
        // Joins are done once every presence row exists; the coalesced
        // presence frames and first heartbeats settle in the seconds after.
        wait_for_presences(&db, target).await?;
        tokio::time::sleep(Duration::from_secs(3)).await;
        let rss_kib = server.rss_kib()?;
        let heartbeat = heartbeat_cost(args, &server, stats.as_mut()).await?;
        let row = MemoryRow {
            tabs: target,
            baseline_kib: baseline,
            rss_kib,
            heartbeat,
            lost: tabs.iter().map(|t| t.counters.closed()).sum(),
        };
        row.print(backend);
        rows.push(row);
    }
    // Stop the server before the tabs go, rather than have it record 10,000 departures.
    drop(server);
    drop(tabs);
    Ok(rows)
}

/// What the heartbeat costs with the tabs open now: the server's CPU time and
/// (on PostgreSQL) the database's work over `--beats` intervals.
async fn heartbeat_cost(
    args: &Args,
    server: &Server,
    mut stats: Option<&mut PgConnection>,
) -> Result<HeartbeatCost, BoxError> {
    let window = args.heartbeat * args.beats;
    if stats.is_some() {
        // A busy PostgreSQL backend reports its counters up to 10 s after
        // its last transaction: let the joins' counts land before the window.
        tokio::time::sleep(Duration::from_secs(11)).await;
    }
    let db_before = match stats.as_deref_mut() {
        Some(conn) => Some(db_activity(conn)?),
        None => None,
    };
    let (cpu_before, started) = (server.cpu_ticks()?, Instant::now());
    tokio::time::sleep(window).await;
    let (cpu_after, elapsed) = (server.cpu_ticks()?, started.elapsed());
    let db_after = match stats {
        Some(conn) => Some(db_activity(conn)?),
        None => None,
    };
    // SAFETY: sysconf only reads a configuration value.
    let ticks_per_second = match unsafe { libc::sysconf(libc::_SC_CLK_TCK) } {
        n if n > 0 => n as f64,
        _ => 100.0,
    };
    let cpu = (cpu_after - cpu_before) as f64 / ticks_per_second;
    let beats = elapsed.as_secs_f64() / args.heartbeat.as_secs_f64();
    let per_beat = |after: i64, before: i64, own: i64| (after - before - own) as f64 / beats;
    Ok(HeartbeatCost {
        core_percent: 100.0 * cpu / elapsed.as_secs_f64(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        db: db_before.zip(db_after).map(|(before, after)| DbPerBeat {
            // The bench's own reading commits one transaction in between.
            transactions: per_beat(after.transactions, before.transactions, 1),
            rows: per_beat(after.rows, before.rows, 0),
        }),
    })
}

/// Counters of the scratch database since it was made.
#[derive(QueryableByName)]
struct DbActivity {
    /// Transactions committed or rolled back.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    transactions: i64,
    /// Rows inserted, updated or deleted.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    rows: i64,
}

fn db_activity(conn: &mut PgConnection) -> Result<DbActivity, BoxError> {
    // One statement: its transaction is the only one the bench adds.
    Ok(diesel::sql_query(
        "SELECT xact_commit + xact_rollback AS transactions, \
                tup_inserted + tup_updated + tup_deleted AS rows \
         FROM pg_stat_database WHERE datname = current_database()",
    )
    .get_result(conn)?)
}

// ---- fan-out latency ----

/// Who has seen the update in flight. Subscribers record into it directly
/// and only the last one wakes the publisher: a channel message per receipt
/// woke the publisher's thread a thousand times per update, CPU that a small
/// machine takes from the server under test.
#[derive(Default)]
struct Tally {
    round: Mutex<Round>,
    complete: Notify,
}

#[derive(Default)]
struct Round {
    seq: u64,
    expected: usize,
    got: usize,
    latest: Option<Instant>,
}

impl Tally {
    /// Starts counting receipts of update `seq`.
    fn start(&self, seq: u64, expected: usize) {
        *self.round.lock().unwrap_or_else(|e| e.into_inner()) = Round {
            seq,
            expected,
            got: 0,
            latest: None,
        };
    }

    /// One subscriber saw update `seq` at `at`; stragglers of an earlier,
    /// timed-out update are ignored.
    fn record(&self, seq: u64, at: Instant) {
        let mut round = self.round.lock().unwrap_or_else(|e| e.into_inner());
        if round.seq != seq {
            return;
        }
        round.got += 1;
        round.latest = round.latest.max(Some(at));
        if round.got == round.expected {
            self.complete.notify_one();
        }
    }

    /// Waits until every subscriber saw update `seq` or the deadline passes,
    /// and returns how many did and when the last of them did.
    async fn wait(&self, seq: u64, deadline: Instant) -> (usize, Option<Instant>) {
        let deadline = tokio::time::Instant::from_std(deadline);
        loop {
            {
                let round = self.round.lock().unwrap_or_else(|e| e.into_inner());
                debug_assert_eq!(round.seq, seq);
                if round.got == round.expected {
                    return (round.got, round.latest);
                }
            }
            // A wake-up can be left over from an earlier round that completed
            // after its timeout: hence the loop and the check above.
            if tokio::time::timeout_at(deadline, self.complete.notified())
                .await
                .is_err()
            {
                let round = self.round.lock().unwrap_or_else(|e| e.into_inner());
                return (round.got, round.latest);
            }
        }
    }
}

/// Opens `n` subscribers on `case` (through `subscriber_ws`, which may be
/// another instance than the publisher's) and measures every update.
async fn fanout(
    args: &Args,
    db: &Database,
    publisher: &Publisher,
    subscribers_server: &Server,
    seed: &Seed,
    case: &SeededCase,
    n: usize,
) -> Result<LatencyRow, BoxError> {
    let tally = Arc::new(Tally::default());
    let urls = (0..n)
        .map(|i| {
            TabSpec::new(
                subscribers_server,
                &case.slug,
                &seed.readers[i % seed.readers.len()],
                source_address(i, args),
            )
        })
        .collect();
    let tabs = Tabs::open(urls, args.connect_concurrency, Some(tally.clone())).await?;
    wait_for_presences(db, n).await?;
    // Let the presence frames of the joins go out before measuring.
    tokio::time::sleep(Duration::from_secs(1)).await;

    let mut row = LatencyRow::new(n);
    let total = (args.warmup_updates + args.updates) as u64;
    for seq in 1..=total {
        tally.start(seq, n);
        let sent = Instant::now();
        let answered = publisher.update(case, seq).await?;
        let (got, latest) = tally.wait(seq, sent + args.timeout).await;
        if seq > args.warmup_updates as u64 {
            row.request.push(answered - sent);
            // Receipts before the response count as zero; an update that did
            // not reach everybody counts as the timeout.
            row.fanout.push(match latest {
                Some(latest) if got == n => latest.saturating_duration_since(answered),
                _ => args.timeout,
            });
            row.end_to_end.push(match latest {
                Some(latest) if got == n => latest - sent,
                _ => args.timeout,
            });
            row.missed += n - got;
        }
        tokio::time::sleep(args.pause).await;
    }
    row.closed = tabs.counters.closed();
    row.resyncs = tabs.counters.resyncs.load(Ordering::Relaxed);
    drop(tabs);
    // The next count starts once the server has recorded these departures.
    wait_for_presences(db, 0).await?;
    Ok(row)
}

/// The editor who makes the edits, from its own tab (session), over one
/// keep-alive connection.
struct Publisher {
    http: reqwest::Client,
    base: String,
}

impl Publisher {
    fn new(base: &str, seed: &Seed) -> Result<Publisher, BoxError> {
        let session = uuid::Uuid::new_v4().to_string();
        let builder = reqwest::Client::builder().timeout(Duration::from_secs(30));
        Ok(Publisher {
            http: tab_client(&seed.publisher_token, &session, builder)?,
            base: base.to_owned(),
        })
    }

    /// `PATCH /cards/:id {"card": {"content": "<seq>"}}`, expecting 200;
    /// returns when the response arrived.
    async fn update(&self, case: &SeededCase, seq: u64) -> Result<Instant, BoxError> {
        let url = format!("{}/cards/{}", self.base, case.card_id);
        let body = serde_json::json!({ "card": { "content": seq.to_string() } }).to_string();
        let response = self.http.patch(&url).body(body).send().await?;
        let answered = Instant::now();
        let status = response.status();
        // Read to the end so the connection is reused.
        let text = response.text().await?;
        if status != reqwest::StatusCode::OK {
            return Err(format!("PATCH {url}: {status}: {text}").into());
        }
        Ok(answered)
    }
}

// ---- tabs ----

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

/// What the tabs of one batch saw that they should not have.
#[derive(Default)]
struct Counters {
    /// Channels the server closed or that broke.
    closed: AtomicUsize,
    /// `resync` frames: the tab fell behind and was told to reload.
    resyncs: AtomicUsize,
}

impl Counters {
    fn closed(&self) -> usize {
        self.closed.load(Ordering::Relaxed)
    }
}

/// Open edits channels, each read continuously by its own task (reading is
/// what answers the server's pings). Dropping them drops the connections.
struct Tabs {
    tasks: Vec<JoinHandle<()>>,
    counters: Arc<Counters>,
}

impl Tabs {
    /// Opens a tab per URL, at most `concurrency` handshakes at a time, and
    /// returns once every one has its welcome. With a `tally`, every tab
    /// records the card updates it sees.
    async fn open(
        urls: Vec<TabSpec>,
        concurrency: usize,
        tally: Option<Arc<Tally>>,
    ) -> Result<Tabs, BoxError> {
        let count = urls.len();
        let counters = Arc::new(Counters::default());
        let tasks = futures_util::stream::iter(urls)
            .map(connect)
            .buffer_unordered(concurrency)
            .map_ok(|socket| tokio::spawn(listen(socket, tally.clone(), counters.clone())))
            .try_collect::<Vec<_>>()
            .await
            .map_err(|e| format!("opening {count} tabs: {e}"))?;
        Ok(Tabs { tasks, counters })
    }
}

impl Drop for Tabs {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Connects one tab, from its source address, and reads up to its welcome.
async fn connect(tab: TabSpec) -> Result<Socket, String> {
    let TabSpec {
        url,
        server,
        source,
    } = tab;
    let handshake = async {
        let socket = TcpSocket::new_v4().map_err(|e| format!("socket: {e}"))?;
        socket
            .bind(SocketAddr::new(source.into(), 0))
            .map_err(|e| format!("bind {source}:0: {e}"))?;
        let stream = socket
            .connect(server)
            .await
            .map_err(|e| format!("connect {server} from {source}: {e}"))?;
        // No Nagle delay on the pongs the tab sends back.
        stream
            .set_nodelay(true)
            .map_err(|e| format!("TCP_NODELAY: {e}"))?;
        // tungstenite zero-fills its whole read buffer (128 KiB by default)
        // before every read: with a thousand tabs that memset was half the
        // bench's CPU, taken from the server on a small machine. Frames here
        // are small; 4 KiB is what the docs suggest for many connections.
        let config = WebSocketConfig::default().read_buffer_size(4 * 1024);
        let (mut socket, _) =
            tokio_tungstenite::client_async_with_config(url, stream, Some(config))
                .await
                .map_err(|e| format!("WebSocket handshake: {e}"))?;
        loop {
            match socket.next().await {
                Some(Ok(Message::Text(text))) => {
                    let frame: Frame = serde_json::from_str(text.as_str())
                        .map_err(|e| format!("first frame is not JSON ({e}): {text}"))?;
                    if frame.kind != "welcome" {
                        return Err(format!("first frame is not a welcome: {text}"));
                    }
                    return Ok(socket);
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(format!("before the welcome: {e}")),
                None => return Err("closed before the welcome".into()),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), handshake)
        .await
        .map_err(|_| "no welcome within 30 s".to_owned())?
}

/// The fields of a server frame the bench looks at.
#[derive(Deserialize)]
struct Frame {
    #[serde(rename = "type")]
    kind: String,
    watchable: Option<Watchable>,
}

#[derive(Deserialize)]
struct Watchable {
    #[serde(rename = "type")]
    kind: String,
    content: Option<String>,
}

impl Frame {
    /// The sequence number of a card update sent by the publisher.
    fn update_seq(&self) -> Option<u64> {
        let watchable = self.watchable.as_ref()?;
        if self.kind != "update" || watchable.kind != "Card" {
            return None;
        }
        watchable.content.as_deref()?.parse().ok()
    }
}

/// Reads one tab until it closes. The receipt's instant is taken before the
/// frame is parsed, so parsing on a busy client does not count as fan-out.
async fn listen(mut socket: Socket, tally: Option<Arc<Tally>>, counters: Arc<Counters>) {
    while let Some(message) = socket.next().await {
        let text = match message {
            Ok(Message::Text(text)) => text,
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => continue,
        };
        let at = Instant::now();
        let Ok(frame) = serde_json::from_str::<Frame>(text.as_str()) else {
            continue;
        };
        if frame.kind == "resync" {
            counters.resyncs.fetch_add(1, Ordering::Relaxed);
        } else if let (Some(tally), Some(seq)) = (&tally, frame.update_seq()) {
            tally.record(seq, at);
        }
    }
    counters.closed.fetch_add(1, Ordering::Relaxed);
}

fn tab_url(ws_base: &str, slug: &str, token: &str) -> String {
    format!(
        "{ws_base}/cases/{slug}/edits?token={token}&sessionId={}",
        uuid::Uuid::new_v4()
    )
}

/// Where one tab connects to, and from.
struct TabSpec {
    url: String,
    server: SocketAddr,
    source: Ipv4Addr,
}

impl TabSpec {
    fn new(server: &Server, slug: &str, token: &str, source: Ipv4Addr) -> TabSpec {
        TabSpec {
            url: tab_url(&server.ws, slug, token),
            server: server.addr,
            source,
        }
    }
}

/// The loopback address tab number `i` connects from: 127.0.0.2 for the
/// first `--tabs-per-address` tabs, then 127.0.0.3, …
fn source_address(i: usize, args: &Args) -> Ipv4Addr {
    // `Args::check` keeps this under 250.
    let k = (i / args.tabs_per_address).min(250) as u8;
    Ipv4Addr::new(127, 0, 0, 2 + k)
}

/// Tabs of global tab numbers `range`: cases fill up in turn, readers take turns.
fn tab_specs(
    server: &Server,
    seed: &Seed,
    range: std::ops::Range<usize>,
    args: &Args,
) -> Vec<TabSpec> {
    range
        .map(|i| {
            let case = &seed.cases[i / args.tabs_per_case];
            let token = &seed.readers[i % seed.readers.len()];
            TabSpec::new(server, &case.slug, token, source_address(i, args))
        })
        .collect()
}

/// Waits until the `presences` table holds `expected` rows: every join (or
/// departure) has been recorded by the server.
async fn wait_for_presences(db: &Database, expected: usize) -> Result<(), BoxError> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let count: i64 = db
            .read(|conn| {
                presences::table
                    .count()
                    .get_result(conn)
                    .map_err(DbError::from)
            })
            .await?;
        if count == expected as i64 {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("{count} presences after 60 s, expected {expected}").into());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

// ---- many instances, many tabs ----

/// What the `many` part measured.
struct ManyRow {
    instances: usize,
    /// Tabs open (joined) at the reading, of those asked for.
    tabs: usize,
    asked: usize,
    /// Of them, on the case the publisher edits.
    on_case: usize,
    /// Per instance: VmRSS after the warm-up, and with its tabs open.
    rss: Vec<(u64, u64)>,
    /// Per instance: tabs it holds.
    per_instance: Vec<usize>,
    /// Connections to the scratch database while the tabs were open (most
    /// seen), the bench's own excluded, by `application_name`.
    connections: Vec<(String, i64)>,
    joins: Duration,
    latency: LatencyRow,
    /// Tabs closed, and resync frames, while the tabs joined.
    lost_joining: usize,
}

impl ManyRow {
    fn kib_per_tab(&self) -> f64 {
        let grown: u64 = self
            .rss
            .iter()
            .map(|(base, with)| with.saturating_sub(*base))
            .sum();
        grown as f64 / self.tabs.max(1) as f64
    }

    fn print(&self) {
        println!(
            "{} instances, {} of {} tabs joined in {:.0} s ({} on the edited case); \
             closed or told to resync while joining: {}",
            self.instances,
            self.tabs,
            self.asked,
            self.joins.as_secs_f64(),
            self.on_case,
            self.lost_joining
        );
        println!();
        println!("| instance | tabs | baseline MiB | RSS w/ tabs MiB | KiB per tab |");
        println!("| ---: | ---: | ---: | ---: | ---: |");
        for (i, ((base, with), tabs)) in self.rss.iter().zip(&self.per_instance).enumerate() {
            println!(
                "| {} | {} | {:.1} | {:.1} | {:.1} |",
                i + 1,
                tabs,
                *base as f64 / 1024.0,
                *with as f64 / 1024.0,
                with.saturating_sub(*base) as f64 / (*tabs).max(1) as f64
            );
        }
        println!(
            "| all | {} | | | {:.1} |",
            self.per_instance.iter().sum::<usize>(),
            self.kib_per_tab()
        );
        println!();
        let total: i64 = self.connections.iter().map(|(_, n)| n).sum();
        let named = self
            .connections
            .iter()
            .map(|(name, n)| format!("{n} {name}"))
            .collect::<Vec<_>>()
            .join(", ");
        println!("PostgreSQL connections to the database (most seen): {total} ({named})");
        println!();
        print_latency_columns();
        self.latency.print("PG, many");
    }
}

/// Every tab's place: tab `i` of the run is on instance `i % instances`, on
/// case `i % cases`, of reader `i % readers`, from 127.0.0.(2 + i /
/// tabs_per_address). A client process gets a range of tabs.
#[derive(serde::Serialize, Deserialize)]
struct ClientSpec {
    servers: Vec<SocketAddr>,
    slugs: Vec<String>,
    tokens: Vec<String>,
    first: usize,
    count: usize,
    tabs_per_address: usize,
    connect_concurrency: usize,
}

impl ClientSpec {
    fn tab(&self, i: usize) -> TabSpec {
        let server = self.servers[i % self.servers.len()];
        let url = tab_url(
            &format!("ws://{server}"),
            &self.slugs[i % self.slugs.len()],
            &self.tokens[i % self.tokens.len()],
        );
        let k = (i / self.tabs_per_address).min(250) as u8;
        TabSpec {
            url,
            server,
            source: Ipv4Addr::new(127, 0, 0, 2 + k),
        }
    }

    /// Whether tab `i` is on the edited case (the first).
    fn on_case(&self, i: usize) -> bool {
        i.is_multiple_of(self.slugs.len())
    }
}

/// The clock every process on this machine shares (CLOCK_MONOTONIC), in
/// nanoseconds: receipts in the client processes and the publisher's
/// response in this one are compared on it.
fn mono_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// A client process: `count` tabs, started by the `many` part as
/// `fanout clients`. Reads its [`ClientSpec`] from the first line of stdin,
/// opens its tabs and says `ready <tabs> <on the case>`; then answers
/// `ask <seq>` with `got <seq> <receipts> <latest receipt, mono ns>`, and
/// says so by itself once every tab on the case has that update; `stats`
/// with `stats <closed> <resyncs>`; `quit` ends it.
async fn clients_role() -> Result<(), BoxError> {
    let (send, mut lines) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    let spec: ClientSpec = match lines.recv().await {
        Some(line) => serde_json::from_str(&line)?,
        None => return Err("no client spec on stdin".into()),
    };
    let range = spec.first..spec.first + spec.count;
    let expected = range.clone().filter(|&i| spec.on_case(i)).count();
    let receipts = Arc::new(Receipts {
        expected,
        seen: Mutex::new(std::collections::HashMap::new()),
    });
    let counters = Arc::new(Counters::default());
    let tasks = futures_util::stream::iter(range.clone())
        .map(|i| {
            let spec = &spec;
            async move {
                connect_patiently(|| spec.tab(i))
                    .await
                    .map(|socket| (i, socket))
            }
        })
        .buffer_unordered(spec.connect_concurrency)
        .map_ok(|(i, socket)| {
            let receipts = spec.on_case(i).then(|| receipts.clone());
            tokio::spawn(listen_receipts(socket, receipts, counters.clone()))
        })
        .try_collect::<Vec<_>>()
        .await;
    let tasks = match tasks {
        Ok(tasks) => tasks,
        Err(e) => {
            say(&format!("failed {e}"));
            return Err(e.into());
        }
    };
    say(&format!("ready {} {expected}", tasks.len()));
    while let Some(line) = lines.recv().await {
        let mut words = line.split_whitespace();
        match (
            words.next(),
            words.next().and_then(|w| w.parse::<u64>().ok()),
        ) {
            (Some("ask"), Some(seq)) => receipts.tell(seq),
            (Some("stats"), _) => say(&format!(
                "stats {} {}",
                counters.closed(),
                counters.resyncs.load(Ordering::Relaxed)
            )),
            (Some("quit"), _) => break,
            _ => say(&format!("unknown {line}")),
        }
    }
    for task in tasks {
        task.abort();
    }
    Ok(())
}

/// Connects one tab, trying again (up to a minute, backing off) when the
/// server refuses it for now: thousands of joins at once queue for the
/// database, and one that waits past `BATON_DB_TIMEOUT` is answered 503.
async fn connect_patiently(tab: impl Fn() -> TabSpec) -> Result<Socket, String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut pause = Duration::from_millis(100);
    loop {
        match connect(tab()).await {
            Ok(socket) => return Ok(socket),
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(pause + Duration::from_millis(rand::random::<u64>() % 100))
                    .await;
                pause = (pause * 2).min(Duration::from_secs(5));
            }
            Err(e) => return Err(e),
        }
    }
}

/// One line to the parent on stdout.
fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// A client process's receipts: per update, how many of its tabs on the
/// case have it, and when the last of them did.
struct Receipts {
    expected: usize,
    seen: Mutex<std::collections::HashMap<u64, (usize, i64)>>,
}

impl Receipts {
    fn record(&self, seq: u64, at: i64) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let entry = seen.entry(seq).or_insert((0, 0));
        entry.0 += 1;
        entry.1 = entry.1.max(at);
        if entry.0 == self.expected {
            say(&format!("got {seq} {} {}", entry.0, entry.1));
        }
    }

    fn tell(&self, seq: u64) {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let (got, latest) = seen.get(&seq).copied().unwrap_or((0, 0));
        say(&format!("got {seq} {got} {latest}"));
    }
}

/// Reads one tab of a client process until it closes.
async fn listen_receipts(
    mut socket: Socket,
    receipts: Option<Arc<Receipts>>,
    counters: Arc<Counters>,
) {
    while let Some(message) = socket.next().await {
        let text = match message {
            Ok(Message::Text(text)) => text,
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => continue,
        };
        let at = mono_ns();
        let Ok(frame) = serde_json::from_str::<Frame>(text.as_str()) else {
            continue;
        };
        if frame.kind == "resync" {
            counters.resyncs.fetch_add(1, Ordering::Relaxed);
        } else if let (Some(receipts), Some(seq)) = (&receipts, frame.update_seq()) {
            receipts.record(seq, at);
        }
    }
    counters.closed.fetch_add(1, Ordering::Relaxed);
}

/// A client process of the `many` part, and its lines (read by a thread of
/// their own: the bench's tokio has no process support).
struct ClientProcess {
    child: Child,
    stdin: std::process::ChildStdin,
    lines: tokio::sync::mpsc::UnboundedReceiver<String>,
    on_case: usize,
}

impl ClientProcess {
    fn spawn(spec: &ClientSpec) -> Result<ClientProcess, BoxError> {
        use std::io::{BufRead, Write};
        let exe = std::env::current_exe()?;
        let mut child = Command::new(exe)
            .arg("clients")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (send, lines) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        writeln!(stdin, "{}", serde_json::to_string(spec)?)?;
        stdin.flush()?;
        Ok(ClientProcess {
            child,
            stdin,
            lines,
            on_case: 0,
        })
    }

    fn send(&mut self, line: &str) -> Result<(), BoxError> {
        use std::io::Write;
        writeln!(self.stdin, "{line}")?;
        self.stdin.flush()?;
        Ok(())
    }

    async fn line(&mut self) -> Result<String, BoxError> {
        self.lines
            .recv()
            .await
            .ok_or_else(|| "a client process ended".into())
    }

    /// Waits for `ready`: returns the tabs it opened.
    async fn ready(&mut self) -> Result<usize, BoxError> {
        let line = self.line().await?;
        let mut words = line.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some("ready"), Some(tabs), Some(on_case)) => {
                self.on_case = on_case.parse()?;
                Ok(tabs.parse()?)
            }
            _ => Err(format!("client process: {line}").into()),
        }
    }

    /// `got <seq> ...` for `seq`, skipping late lines of earlier updates.
    async fn got(&mut self, seq: u64) -> Result<(usize, i64), BoxError> {
        loop {
            let line = self.line().await?;
            let words: Vec<&str> = line.split_whitespace().collect();
            if let ["got", s, got, latest] = words[..] {
                if s.parse::<u64>()? == seq {
                    return Ok((got.parse()?, latest.parse()?));
                }
            }
        }
    }

    async fn stats(&mut self) -> Result<(usize, usize), BoxError> {
        self.send("stats")?;
        loop {
            let line = self.line().await?;
            let words: Vec<&str> = line.split_whitespace().collect();
            if let ["stats", closed, resyncs] = words[..] {
                return Ok((closed.parse()?, resyncs.parse()?));
            }
        }
    }
}

async fn many_part(args: &Args) -> Result<ManyRow, BoxError> {
    let admin_url = args
        .database_url
        .as_deref()
        .ok_or("many needs --database-url")?;
    let instances = args.instances;
    let asked = instances * args.tabs_per_instance;
    let cases = args.cases.max(1);
    let scratch = Scratch::create(Some(admin_url))?;
    // The bench's own pool closes once seeded, so that the connections
    // counted later are the servers' (and the one below).
    let seed = {
        let db = open_db(&scratch.url)?;
        seed(&db, cases, args.readers).await?
    };
    let mut stats = PgConnection::establish(&scratch.url)
        .map_err(|e| format!("cannot connect to {}: {e}", scratch.url))?;

    let pool = args.pool_size.to_string();
    let mut servers = Vec::with_capacity(instances);
    for _ in 0..instances {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        servers.push(
            Server::spawn(
                &scratch.url,
                port,
                args.heartbeat,
                &[("BATON_DB_POOL_SIZE", pool.as_str())],
            )
            .await?,
        );
    }
    let publisher = Publisher::new(&servers[0].http, &seed)?;
    // Warm-up on every instance, as in the memory part.
    let mut warm = Vec::new();
    for server in &servers {
        let urls = (0..20)
            .map(|i| {
                TabSpec::new(
                    server,
                    &seed.cases[0].slug,
                    &seed.readers[i % seed.readers.len()],
                    Ipv4Addr::new(127, 0, 0, 2),
                )
            })
            .collect();
        warm.push(Tabs::open(urls, 20, None).await?);
    }
    for seq in 1..=3 {
        publisher.update(&seed.cases[0], seq).await?;
    }
    drop(warm);
    wait_for_rows(&mut stats, 0, Duration::from_secs(60)).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let baselines = servers
        .iter()
        .map(Server::rss_kib)
        .collect::<Result<Vec<_>, _>>()?;

    // The client processes, each with at most --tabs-per-client tabs.
    let started = Instant::now();
    let per_client = args.tabs_per_client.max(1);
    let mut clients = Vec::new();
    let mut first = 0;
    while first < asked {
        let count = per_client.min(asked - first);
        let spec = ClientSpec {
            servers: servers.iter().map(|s| s.addr).collect(),
            slugs: seed.cases.iter().map(|c| c.slug.clone()).collect(),
            tokens: seed.readers.clone(),
            first,
            count,
            tabs_per_address: args.tabs_per_address,
            // The handshakes in flight are shared out among the processes.
            connect_concurrency: (args.connect_concurrency / asked.div_ceil(per_client)).max(1),
        };
        clients.push(ClientProcess::spawn(&spec)?);
        first += count;
    }
    let mut opened = 0;
    let mut failures = Vec::new();
    for client in &mut clients {
        match client.ready().await {
            Ok(n) => opened += n,
            Err(e) => failures.push(e.to_string()),
        }
    }
    let rows = wait_for_rows(&mut stats, opened as i64, Duration::from_secs(3600)).await;
    let joins = started.elapsed();
    if !failures.is_empty() {
        eprintln!(
            "many: {} client processes failed: {}",
            failures.len(),
            failures[0]
        );
    }
    let joined = rows? as usize;
    // Presence frames of the last joins go out before anything is read.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let (mut closed_joining, mut resyncs_joining) = (0, 0);
    for client in &mut clients {
        let (closed, resyncs) = client.stats().await?;
        closed_joining += closed;
        resyncs_joining += resyncs;
    }
    let rss = baselines
        .iter()
        .zip(&servers)
        .map(|(base, server)| server.rss_kib().map(|now| (*base, now)))
        .collect::<Result<Vec<_>, _>>()?;
    let per_instance = (0..instances)
        .map(|k| (0..opened).filter(|i| i % instances == k).count())
        .collect();
    let mut connections = pg_connections(&mut stats)?;

    // One update at a time through the first instance; every tab on the
    // case, on every instance, must have it.
    let on_case: usize = clients.iter().map(|c| c.on_case).sum();
    let mut latency = LatencyRow::new(on_case);
    let total = (args.warmup_updates + args.updates) as u64;
    for seq in 1..=total {
        let seq = seq + 100;
        let sent = Instant::now();
        let sent_ns = mono_ns();
        let answered_at = publisher.update(&seed.cases[0], seq).await?;
        let answered_ns = sent_ns + (answered_at - sent).as_nanos() as i64;
        let deadline = tokio::time::Instant::from_std(sent + args.timeout);
        let (mut got, mut latest) = (0, 0i64);
        for client in clients.iter_mut().filter(|c| c.on_case > 0) {
            let heard = match tokio::time::timeout_at(deadline, client.got(seq)).await {
                Ok(heard) => heard?,
                Err(_) => {
                    client.send(&format!("ask {seq}"))?;
                    client.got(seq).await?
                }
            };
            got += heard.0;
            latest = latest.max(heard.1);
        }
        if seq > 100 + args.warmup_updates as u64 {
            let complete = got == on_case;
            let ns = |n: i64| Duration::from_nanos(n.max(0) as u64);
            latency.request.push(answered_at - sent);
            latency.fanout.push(if complete {
                ns(latest - answered_ns)
            } else {
                args.timeout
            });
            latency.end_to_end.push(if complete {
                ns(latest - sent_ns)
            } else {
                args.timeout
            });
            latency.missed += on_case - got;
        }
        if seq % 10 == 0 {
            merge_most(&mut connections, pg_connections(&mut stats)?);
        }
        tokio::time::sleep(args.pause).await;
    }
    let (mut closed, mut resyncs) = (0, 0);
    for client in &mut clients {
        let (c, r) = client.stats().await?;
        closed += c;
        resyncs += r;
    }
    latency.closed = closed.saturating_sub(closed_joining);
    // Only what happened after the joins counts against the update phase.
    latency.resyncs = resyncs.saturating_sub(resyncs_joining);
    // The servers stop before the tabs go, rather than record every
    // departure; each client process is told to quit as it drops.
    drop(servers);
    drop(clients);
    Ok(ManyRow {
        instances,
        tabs: joined,
        asked,
        on_case,
        rss,
        per_instance,
        connections,
        joins,
        latency,
        lost_joining: closed_joining + resyncs_joining,
    })
}

/// Waits until `presences` holds `expected` rows (on the bench's own
/// connection), saying how far the joins are every 10 s; returns the count.
async fn wait_for_rows(
    conn: &mut PgConnection,
    expected: i64,
    patience: Duration,
) -> Result<i64, BoxError> {
    let started = Instant::now();
    let mut said = Instant::now();
    let mut last = -1;
    let mut last_change = Instant::now();
    loop {
        let count: i64 = presences::table.count().get_result(conn)?;
        if count == expected {
            return Ok(count);
        }
        if count != last {
            last = count;
            last_change = Instant::now();
        }
        if said.elapsed() > Duration::from_secs(10) {
            eprintln!(
                "many: {count} of {expected} tabs joined after {:.0} s",
                started.elapsed().as_secs_f64()
            );
            said = Instant::now();
        }
        // No join for a minute: the rest will not come.
        if started.elapsed() > patience || last_change.elapsed() > Duration::from_secs(60) {
            return Err(format!(
                "{count} presences after {:.0} s, expected {expected}",
                started.elapsed().as_secs_f64()
            )
            .into());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[derive(QueryableByName)]
struct ConnectionCount {
    #[diesel(sql_type = diesel::sql_types::Text)]
    name: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

/// Connections to the scratch database now, by `application_name`, this
/// one left out.
fn pg_connections(conn: &mut PgConnection) -> Result<Vec<(String, i64)>, BoxError> {
    let rows: Vec<ConnectionCount> = diesel::sql_query(
        "SELECT coalesce(nullif(application_name, ''), 'pool') AS name, count(*) AS n \
         FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid() \
         GROUP BY 1 ORDER BY 1",
    )
    .load(conn)?;
    Ok(rows.into_iter().map(|r| (r.name, r.n)).collect())
}

/// Keeps, per name, the most connections seen.
fn merge_most(most: &mut Vec<(String, i64)>, now: Vec<(String, i64)>) {
    for (name, n) in now {
        match most.iter_mut().find(|(m, _)| *m == name) {
            Some((_, m)) => *m = (*m).max(n),
            None => most.push((name, n)),
        }
    }
}

// ---- the server process ----

/// The `baton` to run: this build's, or `BATON_BENCH_BIN` (another build of
/// the same schema and migrations, to compare two builds with one bench).
fn baton_binary() -> String {
    std::env::var("BATON_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_baton").to_owned())
}

/// A `baton serve` child process; killed when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
    http: String,
    ws: String,
}

impl Server {
    /// Starts baton on a free port of 127.0.0.1.
    async fn start(database_url: &str, args: &Args) -> Result<Server, BoxError> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        Server::spawn(database_url, port, args.heartbeat, &[]).await
    }

    /// Starts baton on `port` and waits until `/healthz` answers 200.
    async fn spawn(
        database_url: &str,
        port: u16,
        heartbeat: Duration,
        env: &[(&str, &str)],
    ) -> Result<Server, BoxError> {
        let child = Command::new(baton_binary())
            .envs(env.iter().copied())
            .arg("serve")
            .env("DATABASE_URL", database_url)
            .env("BATON_JWT_SECRET", JWT_SECRET)
            .env("BATON_BIND", format!("127.0.0.1:{port}"))
            .env("RUST_LOG", "warn")
            .env(
                "BATON_HEARTBEAT_INTERVAL",
                humantime::format_duration(heartbeat).to_string(),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", baton_binary()))?;
        let mut server = Server {
            child,
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
            http: format!("http://127.0.0.1:{port}"),
            ws: format!("ws://127.0.0.1:{port}"),
        };
        server.wait_ready().await?;
        Ok(server)
    }

    async fn wait_ready(&mut self) -> Result<(), BoxError> {
        let http = reqwest::Client::new();
        let url = format!("{}/healthz", self.http);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Err(format!("baton serve exited during start-up: {status}").into());
            }
            let healthy = http
                .get(&url)
                .timeout(Duration::from_secs(1))
                .send()
                .await
                .is_ok_and(|r| r.status() == reqwest::StatusCode::OK);
            if healthy {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("{url} did not answer 200 within 30 s").into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The server's resident memory (VmRSS), in KiB.
    fn rss_kib(&self) -> Result<u64, BoxError> {
        let path = format!("/proc/{}/status", self.child.id());
        let status = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .ok_or_else(|| format!("no VmRSS line in {path}").into())
    }

    /// The server's CPU time so far, user and system (utime + stime of
    /// /proc/<pid>/stat), in clock ticks.
    fn cpu_ticks(&self) -> Result<u64, BoxError> {
        let path = format!("/proc/{}/stat", self.child.id());
        let stat = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        // The command name, field 2, is in parentheses and may hold spaces:
        // count fields from the last `)`, where field 3 starts.
        let after_name = stat
            .rfind(')')
            .map(|i| &stat[i + 1..])
            .ok_or_else(|| format!("{path}: no command name"))?;
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        // utime and stime are fields 14 and 15, so 11 and 12 from field 3.
        let field = |i: usize| -> Result<u64, BoxError> {
            fields
                .get(i)
                .and_then(|f| f.parse().ok())
                .ok_or_else(|| format!("{path}: field {} is not a number", i + 3).into())
        };
        Ok(field(11)? + field(12)?)
    }
}

impl Drop for ClientProcess {
    fn drop(&mut self) {
        let _ = self.send("quit");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---- data ----

struct SeededCase {
    slug: String,
    card_id: i64,
}

struct Seed {
    cases: Vec<SeededCase>,
    publisher_token: String,
    /// One token per reader user.
    readers: Vec<String>,
}

/// Opens the database from this process, for seeding and for watching
/// `presences`. The bus is local and unused: seeding broadcasts nothing.
fn open_db(url: &str) -> Result<Database, BoxError> {
    let bus = Arc::new(LocalBus {
        hub: Default::default(),
    });
    // Seeding thousands of rows is no request: a generous limit.
    Ok(Database::open(url, 2, Duration::from_secs(60), bus)?)
}

/// `cases` cases with a page and a card each, an editor who publishes, and
/// `readers` reader users who are members of every case.
async fn seed(db: &Database, cases: usize, readers: usize) -> Result<Seed, BoxError> {
    // Argon2 is slow on purpose; nobody logs in here, so one hash serves all.
    let hash = password::hash("fanout")?;
    let (publisher, reader_ids, cases) = db
        .write(None, move |tx| {
            let user = |tx: &mut baton::db::Tx, i: &str| {
                let email = format!("{i}@fanout.invalid");
                User::create(tx.conn, &email, i, &hash, false, tx.now)
            };
            let publisher = user(tx, "publisher")?;
            let readers = (0..readers)
                .map(|i| user(tx, &format!("reader{i}")))
                .collect::<QueryResult<Vec<_>>>()?;
            let mut seeded = Vec::with_capacity(cases);
            for c in 0..cases {
                let slug = format!("fanout-{c}");
                let case = Case::create(
                    tx.conn,
                    &slug,
                    "Fan-out",
                    baton::models::CaseMaker::Person,
                    tx.now,
                )?;
                Membership::create(tx.conn, case.id, publisher.id, Role::Editor, tx.now)?;
                for reader in &readers {
                    Membership::create(tx.conn, case.id, reader.id, Role::Reader, tx.now)?;
                }
                let page = support::plant(
                    tx,
                    "Page",
                    case.id,
                    None,
                    Some(0),
                    serde_json::json!({"title": "Page 1"}),
                )?;
                let card = support::plant(
                    tx,
                    "Card",
                    case.id,
                    Some(page),
                    Some(0),
                    serde_json::json!({"content": "draft"}),
                )?;
                seeded.push(SeededCase {
                    slug,
                    card_id: card,
                });
            }
            let keys = JwtKeys::new(JWT_SECRET.as_bytes(), Duration::from_secs(3600));
            let publisher = tokens::issue(tx.conn, &keys, publisher.id, tx.now)?;
            let readers = readers
                .iter()
                .map(|r| tokens::issue(tx.conn, &keys, r.id, tx.now))
                .collect::<Result<Vec<_>, AppError>>()?;
            Ok::<_, AppError>((publisher, readers, seeded))
        })
        .await?;
    Ok(Seed {
        cases,
        publisher_token: publisher,
        readers: reader_ids,
    })
}

/// A database for one part: a SQLite file in a temporary directory, or a
/// scratch PostgreSQL database; removed with this.
struct Scratch {
    url: String,
    _dir: Option<tempfile::TempDir>,
    _postgres: Option<ScratchPg>,
}

impl Scratch {
    fn create(postgres_url: Option<&str>) -> Result<Scratch, BoxError> {
        if let Some(admin_url) = postgres_url {
            let postgres = ScratchPg::create(admin_url, "baton_fanout")?;
            return Ok(Scratch {
                url: postgres.url.clone(),
                _dir: None,
                _postgres: Some(postgres),
            });
        }
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("fanout.sqlite3");
        let url = path
            .to_str()
            .ok_or("temporary path is not UTF-8")?
            .to_owned();
        Ok(Scratch {
            url,
            _dir: Some(dir),
            _postgres: None,
        })
    }
}

/// Raises the open-file limit to `needed` descriptors (the hard limit too,
/// when this process may) or at least to the hard limit, and checks that
/// `needed` fit. The server, a child, inherits the limit.
fn raise_open_file_limit(needed: u64) -> Result<(), String> {
    use rlimit::Resource;
    let get = || {
        Resource::NOFILE
            .get()
            .map_err(|e| format!("getrlimit(RLIMIT_NOFILE): {e}"))
    };
    let (_, hard) = get()?;
    // Raising the hard limit needs privileges; without them, settle for it.
    let wanted = hard.max(needed).max(65_536);
    if Resource::NOFILE.set(wanted, wanted).is_err() {
        Resource::NOFILE
            .set(hard, hard)
            .map_err(|e| format!("setrlimit(RLIMIT_NOFILE, {hard}): {e}"))?;
    }
    let (soft, _) = get()?;
    if soft < needed {
        return Err(format!(
            "the open-file limit is {soft} but this run needs about {needed} \
             (one per tab, in the bench and in the server): raise the hard limit \
             (`ulimit -Hn {needed}` in the shell that starts cargo, which needs root \
             with CAP_SYS_RESOURCE) or ask for fewer tabs"
        ));
    }
    Ok(())
}

// ---- output ----

#[derive(Default)]
struct LatencyRow {
    subscribers: usize,
    /// Per update: last receipt minus the publisher's HTTP response.
    fanout: Vec<Duration>,
    /// Per update: the publisher's PATCH round trip.
    request: Vec<Duration>,
    /// Per update: last receipt minus the moment the PATCH was sent.
    end_to_end: Vec<Duration>,
    /// Deliveries that did not arrive within the timeout.
    missed: usize,
    closed: usize,
    resyncs: usize,
}

impl LatencyRow {
    fn new(subscribers: usize) -> LatencyRow {
        LatencyRow {
            subscribers,
            ..Default::default()
        }
    }

    /// Adds the samples and losses of another run at the same count.
    fn absorb(&mut self, other: LatencyRow) {
        self.fanout.extend(other.fanout);
        self.request.extend(other.request);
        self.end_to_end.extend(other.end_to_end);
        self.missed += other.missed;
        self.closed += other.closed;
        self.resyncs += other.resyncs;
    }

    fn incomplete(&self) -> bool {
        self.missed > 0 || self.closed > 0 || self.resyncs > 0
    }

    fn p99(&self) -> Duration {
        percentile(&self.fanout, 0.99)
    }

    fn print(&self, backend: &str) {
        println!(
            "| {backend:<10} | {:>11} | {:>7} | {:>6.2} | {:>6.2} | {:>6.2} | {:>9.2} | {:>13.2} | {:>6} | {:>4} |",
            self.subscribers,
            self.fanout.len(),
            ms(percentile(&self.fanout, 0.5)),
            ms(self.p99()),
            ms(percentile(&self.fanout, 1.0)),
            ms(percentile(&self.request, 0.5)),
            ms(percentile(&self.end_to_end, 0.99)),
            self.missed,
            self.closed + self.resyncs,
        );
    }
}

fn print_latency_header() {
    print_latency_legend();
    print_latency_columns();
}

fn print_latency_legend() {
    println!(
        "Fan-out, in ms: the last subscriber's receipt after the publisher's PATCH response \
         (p50, p99, max); the PATCH round trip (p50); the last receipt after the PATCH was \
         sent (p99). lost: tabs closed or told to resync.\n"
    );
}

fn print_latency_columns() {
    println!(
        "| backend    | subscribers | updates | p50    | p99    | max    | PATCH p50 | from send p99 | missed | lost |"
    );
    println!(
        "| ---------- | ----------: | ------: | -----: | -----: | -----: | --------: | ------------: | -----: | ---: |"
    );
}

/// The same subscriber count measured on both routes.
struct CrossRow {
    /// Subscribers on the publisher's instance.
    single: LatencyRow,
    /// Subscribers on the other instance.
    cross: LatencyRow,
}

fn print_cross_header() {
    println!(
        "Two instances, A and B, on one PostgreSQL database; the publisher edits through A. \
         A to A: subscribers on A; A to B: subscribers on B."
    );
    print_latency_legend();
    print_latency_columns();
}

struct MemoryRow {
    tabs: usize,
    baseline_kib: u64,
    rss_kib: u64,
    heartbeat: HeartbeatCost,
    /// Tabs closed by the server (or broken) before the reading.
    lost: usize,
}

impl MemoryRow {
    fn kib_per_tab(&self) -> f64 {
        self.rss_kib.saturating_sub(self.baseline_kib) as f64 / self.tabs as f64
    }

    fn print(&self, backend: &str) {
        let mib = |kib: u64| kib as f64 / 1024.0;
        let beat = &self.heartbeat;
        let (transactions, rows) = match &beat.db {
            Some(db) => (format!("{:.1}", db.transactions), format!("{:.0}", db.rows)),
            None => ("n/a".into(), "n/a".into()),
        };
        println!(
            "| {backend:<10} | {:>9} | {:>12.1} | {:>15.1} | {:>11.1} | {:>10.2} | {:>9.2} | {:>10} | {:>9} | {:>4} |",
            self.tabs,
            mib(self.baseline_kib),
            mib(self.rss_kib),
            self.kib_per_tab(),
            beat.core_percent,
            beat.core_percent / beat.cpus as f64,
            transactions,
            rows,
            self.lost,
        );
    }
}

/// The server's CPU and database work while its tabs sit idle.
struct HeartbeatCost {
    /// CPU time as a share of one core.
    core_percent: f64,
    cpus: usize,
    /// PostgreSQL only.
    db: Option<DbPerBeat>,
}

/// The database's work per heartbeat interval.
struct DbPerBeat {
    transactions: f64,
    /// Rows written.
    rows: f64,
}

fn print_memory_header() {
    println!(
        "Server memory (VmRSS) with idle open tabs, and what the server does while \
         they idle: CPU (utime + stime) as % of one core and of the machine, and on \
         PostgreSQL the transactions and rows written (pg_stat_database) per \
         heartbeat interval.\n"
    );
    println!(
        "| backend    | idle tabs | baseline MiB | RSS w/ tabs MiB | KiB per tab | CPU % core | CPU % all | xacts/beat | rows/beat | lost |"
    );
    println!(
        "| ---------- | --------: | -----------: | --------------: | ----------: | ---------: | --------: | ---------: | --------: | ---: |"
    );
}

fn print_targets(latency: &[LatencyRow], cross: &[CrossRow], memory: &[MemoryRow]) {
    let verdict = |met: bool| if met { "met" } else { "MISSED" };
    if let Some(row) = latency.iter().find(|r| r.subscribers == TARGET_P99_AT) {
        let p99 = row.p99();
        println!(
            "target: fan-out p99 <= {} ms at {TARGET_P99_AT} subscribers: {:.2} ms ({})",
            TARGET_P99.as_millis(),
            ms(p99),
            verdict(p99 <= TARGET_P99 && !row.incomplete())
        );
    }
    if let Some(row) = cross.iter().find(|r| r.cross.subscribers == TARGET_P99_AT) {
        let (single, cross) = (row.single.p99(), row.cross.p99());
        println!(
            "target: cross-instance p99 < 2 x single-instance p99 at {TARGET_P99_AT} subscribers: \
             {:.2} ms against {:.2} ms, ratio {:.2} ({})",
            ms(cross),
            ms(single),
            cross.as_secs_f64() / single.as_secs_f64().max(f64::MIN_POSITIVE),
            verdict(cross < 2 * single && !row.single.incomplete() && !row.cross.incomplete())
        );
    }
    if let Some(row) = memory.last() {
        println!(
            "target: <= {TARGET_KIB_PER_TAB} KiB per idle tab: {:.1} KiB at {} tabs ({})",
            row.kib_per_tab(),
            row.tabs,
            verdict(row.kib_per_tab() <= TARGET_KIB_PER_TAB && row.lost == 0)
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The `q` quantile (nearest rank) of unsorted samples; zero when empty.
fn percentile(samples: &[Duration], q: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    match sorted.len() {
        0 => Duration::ZERO,
        n => sorted[((n - 1) as f64 * q).round() as usize],
    }
}
