//! Login-flood benchmark: does a flood of wrong passwords disturb lock
//! traffic? 16 clients run lock cycles (acquire, release) on their own cards,
//! first on a quiet server, then while `--flooders` clients send wrong
//! passwords for one account as fast as they are answered. Prints the lock
//! requests' p50/p99 in both phases, their ratio (target: p99 with the flood
//! at most 2 × without), and how the sign-ins were answered.
//!
//! ```text
//! cargo bench --bench login_flood
//! cargo bench --bench login_flood -- --backend sqlite --duration 5s
//! ```

#[path = "support/backends.rs"]
mod backends;
mod support;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use backends::Backends;
use baton::auth::{password, tokens};
use baton::config::Settings;
use baton::error::AppError;
use baton::models::{Case, Membership, Role, User};
use baton::server;
use clap::Parser;
use serde_json::json;
use support::tab_client;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const JWT_SECRET: &[u8] = b"baton-bench-secret-baton-bench-secret";
const TARGET_EMAIL: &str = "target@bench.invalid";

#[derive(Parser)]
#[command(about = "Lock latency with and without a flood of wrong sign-ins")]
struct Args {
    #[arg(long, env = "BATON_BENCH_BACKEND", value_enum, default_value_t = Backends::All)]
    backend: Backends,

    /// How long each phase is measured, after the warm-up.
    #[arg(long, env = "BATON_BENCH_DURATION", default_value = "3s", value_parser = humantime::parse_duration)]
    duration: Duration,

    #[arg(long, env = "BATON_BENCH_WARMUP", default_value = "500ms", value_parser = humantime::parse_duration)]
    warmup: Duration,

    /// Clients running lock cycles.
    #[arg(long, default_value_t = 16)]
    clients: usize,

    /// Clients sending wrong passwords, each as fast as it is answered.
    #[arg(long, default_value_t = 64)]
    flooders: usize,

    #[arg(
        long,
        env = "BATON_BENCH_POSTGRES_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    postgres_url: String,

    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() {
    let args = Args::parse();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "login_flood: {} lock clients, {} flooders, {:?} per phase after {:?} warm-up; \
         2 HTTP workers; {cpus} CPUs; latencies in ms.\n",
        args.clients, args.flooders, args.duration, args.warmup
    );
    let mut failed = false;
    let runs = backends::on_each(
        args.backend,
        &args.postgres_url,
        "baton_flood",
        |_, url, pool| run(url, pool, &args),
    );
    for (name, outcome) in runs {
        failed |= report(name, outcome);
    }
    if failed {
        std::process::exit(1);
    }
}

/// Prints one backend's figures; true if it failed.
fn report(backend: &str, outcome: Result<Outcome, BoxError>) -> bool {
    match outcome {
        Ok(o) => {
            let ratio = o.flood.p99 / o.quiet.p99;
            println!(
                "{backend:<10} quiet:      {:>6.0} cycles/s  lock p50 {:>6.2}  p99 {:>6.2}\n\
                 {backend:<10} with flood: {:>6.0} cycles/s  lock p50 {:>6.2}  p99 {:>6.2}  \
                 sign-ins answered {:?} ({:.0}/s)\n\
                 {backend:<10} p99 with flood / without: {ratio:.2} (target ≤ 2.00: {})\n",
                o.quiet.rate,
                o.quiet.p50,
                o.quiet.p99,
                o.flood.rate,
                o.flood.p50,
                o.flood.p99,
                o.logins,
                o.logins.values().sum::<usize>() as f64 / o.flood.seconds,
                if ratio <= 2.0 { "met" } else { "MISSED" },
            );
            let errors = o.quiet.errors + o.flood.errors;
            let odd = o.logins.keys().any(|s| ![401, 429].contains(s));
            if errors > 0 || odd {
                eprintln!(
                    "{backend}: {errors} lock requests failed; sign-ins {:?}",
                    o.logins
                );
            }
            errors > 0 || odd
        }
        Err(e) => {
            eprintln!("{backend} run failed: {e}");
            true
        }
    }
}

struct Outcome {
    quiet: Phase,
    flood: Phase,
    logins: BTreeMap<u16, usize>,
}

struct Phase {
    rate: f64,
    p50: f64,
    p99: f64,
    errors: usize,
    seconds: f64,
}

fn run(database_url: &str, pool_size: u32, args: &Args) -> Result<Outcome, BoxError> {
    let mut settings = Settings::defaults(database_url);
    settings.workers = Some(2);
    settings.database.db_pool_size = pool_size;
    actix_web::rt::System::new().block_on(async move {
        let state = server::build_state(settings, JWT_SECRET)?;
        let tabs = seed(&state, args.clients).await?;
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let base = format!("http://{}", listener.local_addr()?);
        let server = server::start(state.clone(), listener)?;
        let handle = server.handle();
        actix_web::rt::spawn(server);

        let quiet = lock_phase(&base, &tabs, args).await?;
        let stop = Arc::new(AtomicBool::new(false));
        let logins = Arc::new(Mutex::new(BTreeMap::<u16, usize>::new()));
        let flooders: Vec<_> = (0..args.flooders)
            .map(|_| {
                let (base, stop, logins) = (base.clone(), stop.clone(), logins.clone());
                actix_web::rt::spawn(async move {
                    let http = reqwest::Client::new();
                    while !stop.load(Ordering::Relaxed) {
                        let status = http
                            .post(format!("{base}/auth/login"))
                            .json(&json!({ "email": TARGET_EMAIL, "password": "wrong guess" }))
                            .send()
                            .await
                            .map(|r| r.status().as_u16())
                            .unwrap_or(0);
                        *logins.lock().unwrap().entry(status).or_default() += 1;
                    }
                })
            })
            .collect();
        let flood = lock_phase(&base, &tabs, args).await?;
        stop.store(true, Ordering::Relaxed);
        for f in flooders {
            let _ = f.await;
        }
        handle.stop(false).await;
        let logins = logins.lock().unwrap().clone();
        Ok(Outcome {
            quiet,
            flood,
            logins,
        })
    })
}

/// (token, session id, card id) per lock client.
type Tab = (String, String, i64);

async fn seed(state: &baton::state::AppState, clients: usize) -> Result<Vec<Tab>, BoxError> {
    let hash = password::hash("the right one")?;
    let jwt = state.jwt.clone();
    let tabs = state
        .db
        .write(None, move |tx| {
            User::create(tx.conn, TARGET_EMAIL, "Target", &hash, false, tx.now)?;
            let case = Case::create(
                tx.conn,
                "flood",
                "Flood",
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
            let mut tabs = Vec::new();
            for i in 0..clients {
                let email = format!("editor{i}@bench.invalid");
                let user = User::create(tx.conn, &email, "Editor", &hash, false, tx.now)?;
                Membership::create(tx.conn, case.id, user.id, Role::Editor, tx.now)?;
                let card = support::plant(
                    tx,
                    "Card",
                    case.id,
                    Some(page),
                    Some(i as i32),
                    serde_json::json!({"content": ""}),
                )?;
                let token = tokens::issue(tx.conn, &jwt, user.id, tx.now)?;
                tabs.push((token, uuid::Uuid::new_v4().to_string(), card));
            }
            Ok::<_, AppError>(tabs)
        })
        .await?;
    Ok(tabs)
}

/// Every client runs lock cycles for warm-up + duration; requests started
/// after the warm-up are counted.
async fn lock_phase(base: &str, tabs: &[Tab], args: &Args) -> Result<Phase, BoxError> {
    let started = Instant::now();
    let counted_from = started + args.warmup;
    let until = counted_from + args.duration;
    let mut tasks = Vec::new();
    for (token, session, card) in tabs {
        let (http, card) = (
            tab_client(token, session, reqwest::Client::builder())?,
            *card,
        );
        let base = base.to_owned();
        tasks.push(actix_web::rt::spawn(async move {
            let mut latencies = Vec::new();
            let (mut cycles, mut errors) = (0usize, 0usize);
            let body =
                json!({ "lock": { "lockableType": "Card", "lockableParam": card.to_string() } });
            while Instant::now() < until {
                let t0 = Instant::now();
                let acquired = http.post(format!("{base}/locks")).json(&body).send().await;
                let t1 = Instant::now();
                let id = match acquired {
                    Ok(r) if r.status() == 201 => r
                        .json::<serde_json::Value>()
                        .await
                        .ok()
                        .and_then(|v| v["id"].as_i64()),
                    _ => None,
                };
                let Some(id) = id else {
                    errors += 1;
                    continue;
                };
                let t2 = Instant::now();
                let released = http.delete(format!("{base}/locks/{id}")).send().await;
                let t3 = Instant::now();
                if !matches!(released, Ok(ref r) if r.status() == 204) {
                    errors += 1;
                }
                if t0 >= counted_from && t0 < until {
                    cycles += 1;
                    latencies.push(t1 - t0);
                    latencies.push(t3 - t2);
                }
            }
            (latencies, cycles, errors)
        }));
    }
    let mut latencies = Vec::new();
    let (mut cycles, mut errors) = (0, 0);
    for task in tasks {
        let (l, c, e) = task.await?;
        latencies.extend(l);
        cycles += c;
        errors += e;
    }
    latencies.sort();
    let at = |q: f64| {
        latencies
            .get(((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1)))
            .map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0)
    };
    let seconds = args.duration.as_secs_f64();
    Ok(Phase {
        rate: cycles as f64 / seconds,
        p50: at(0.50),
        p99: at(0.99),
        errors,
        seconds,
    })
}
