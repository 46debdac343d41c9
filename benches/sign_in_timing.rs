//! Sign-in timing: does the answer's time say whether an email is known?
//! One client signs in, one request at a time, alternating a wrong
//! password for an account that exists and any password for an email
//! nobody has, and prints the median (and p10/p90) of each. Both are 401;
//! both should cost one argon2 verification, so the medians should be
//! within noise of each other.
//!
//! ```text
//! cargo bench --bench sign_in_timing
//! cargo bench --bench sign_in_timing -- --backend sqlite --rounds 400
//! ```

#[path = "support/backends.rs"]
mod backends;
// Only its scratch PostgreSQL database (through `backends`) is used here.
#[allow(dead_code)]
mod support;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use backends::Backends;
use baton::auth::password;
use baton::config::Settings;
use baton::error::AppError;
use baton::models::User;
use baton::server;
use clap::Parser;
use serde_json::json;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const JWT_SECRET: &[u8] = b"baton-bench-secret-baton-bench-secret";
const KNOWN_EMAIL: &str = "known@bench.invalid";

#[derive(Parser)]
#[command(about = "Sign-in time for an unknown email against a wrong password")]
struct Args {
    #[arg(long, env = "BATON_BENCH_BACKEND", value_enum, default_value_t = Backends::All)]
    backend: Backends,

    /// Sign-ins of each kind, measured after the warm-up.
    #[arg(long, default_value_t = 200)]
    rounds: usize,

    /// Sign-ins of each kind first, not measured.
    #[arg(long, default_value_t = 20)]
    warmup: usize,

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
    println!(
        "sign_in_timing: {} sign-ins of each kind after {} of warm-up, one at a time, \
         alternating; 1 hashing thread; times in ms.\n",
        args.rounds, args.warmup
    );
    let mut failed = false;
    let runs = backends::on_each(
        args.backend,
        &args.postgres_url,
        "baton_sign_in_timing",
        |_, url, pool| run(url, pool, &args),
    );
    for (name, outcome) in runs {
        match outcome {
            Ok([wrong, unknown]) => println!(
                "{name:<10} wrong password: median {:>6.2}  p10 {:>6.2}  p90 {:>6.2}\n\
                 {name:<10} unknown email:  median {:>6.2}  p10 {:>6.2}  p90 {:>6.2}\n\
                 {name:<10} unknown / wrong (medians): {:.2}\n",
                wrong.median,
                wrong.p10,
                wrong.p90,
                unknown.median,
                unknown.p10,
                unknown.p90,
                unknown.median / wrong.median,
            ),
            Err(e) => {
                eprintln!("{name} run failed: {e}");
                failed = true;
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}

struct Times {
    median: f64,
    p10: f64,
    p90: f64,
}

fn run(database_url: &str, pool_size: u32, args: &Args) -> Result<[Times; 2], BoxError> {
    let mut settings = Settings::defaults(database_url);
    settings.workers = Some(2);
    settings.database.db_pool_size = pool_size;
    // Every sign-in here fails on purpose: none may be refused for it.
    settings.login_account_limit = u32::MAX;
    settings.login_address_limit = u32::MAX;
    actix_web::rt::System::new().block_on(async move {
        let state = server::build_state(settings, JWT_SECRET)?;
        let hash = password::hash("the right one")?;
        state
            .db
            .write(None, move |tx| {
                User::create(tx.conn, KNOWN_EMAIL, "Known", &hash, false, tx.now)?;
                Ok::<_, AppError>(())
            })
            .await?;
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let base = format!("http://{}", listener.local_addr()?);
        let server = server::start(state.clone(), listener)?;
        let handle = server.handle();
        actix_web::rt::spawn(server);

        let http = reqwest::Client::new();
        let sign_in = |email: String| {
            let request = http
                .post(format!("{base}/auth/login"))
                .json(&json!({ "email": email, "password": "a wrong guess" }));
            async move {
                let started = Instant::now();
                let status = request.send().await?.status().as_u16();
                if status != 401 {
                    return Err(format!("a sign-in answered {status}, not 401").into());
                }
                Ok::<_, BoxError>(started.elapsed())
            }
        };
        let (mut wrong, mut unknown) = (Vec::new(), Vec::new());
        for i in 0..args.warmup + args.rounds {
            let w = sign_in(KNOWN_EMAIL.to_owned()).await?;
            let u = sign_in(format!("nobody{i}@bench.invalid")).await?;
            if i >= args.warmup {
                wrong.push(w);
                unknown.push(u);
            }
        }
        handle.stop(false).await;
        Ok([times(wrong), times(unknown)])
    })
}

fn times(mut samples: Vec<Duration>) -> Times {
    samples.sort();
    let at = |q: f64| {
        let i = ((samples.len() - 1) as f64 * q).round() as usize;
        samples[i].as_secs_f64() * 1000.0
    };
    Times {
        median: at(0.5),
        p10: at(0.1),
        p90: at(0.9),
    }
}
