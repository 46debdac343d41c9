//! Settings, read from the environment (and `.env`) or the command line.
//! Every setting of the contract is here with its default.

use std::time::Duration;

use clap::Args;

pub fn duration(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s)
        .map_err(|e| format!("{e}; write durations like 250ms, 5s or 30m"))?;
    if d.is_zero() {
        return Err("must be longer than zero".into());
    }
    Ok(d)
}

/// A duration setting's parser whose refusal names the setting: clap shows
/// the flag, and an operator who set the variable looks for its name.
fn named_duration(
    setting: &'static str,
    example: &'static str,
    s: &str,
) -> Result<Duration, String> {
    duration(s).map_err(|e| format!("{setting} must be a duration like {example}: {e}"))
}

fn audit_retention(s: &str) -> Result<Duration, String> {
    named_duration("BATON_AUDIT_RETENTION", "90d", s)
}

fn backup_every(s: &str) -> Result<Duration, String> {
    named_duration("BATON_BACKUP_EVERY", "6h", s)
}

fn backup_keep(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "BATON_BACKUP_KEEP must be a whole number of backups to keep, 1 or more; got `{s}`"
        )),
    }
}

/// Where the data lives.
#[derive(Args, Clone, Debug)]
pub struct DatabaseSettings {
    /// SQLite file (the default) or a postgres:// URL.
    #[arg(long, env = "DATABASE_URL", default_value = "baton.sqlite3")]
    pub database_url: String,

    /// Connections in the pool.
    #[arg(long, env = "BATON_DB_POOL_SIZE", default_value_t = 16)]
    pub db_pool_size: u32,

    /// How long a request waits for the database (a pooled connection and
    /// its statements, in total) before it gives up with 503. On
    /// PostgreSQL also each statement's limit, and how long a transaction
    /// may sit idle before the server aborts it.
    #[arg(long, env = "BATON_DB_TIMEOUT", default_value = "5s", value_parser = duration)]
    pub db_timeout: Duration,

    /// The schema file that declares the record types (TOML); the built-in
    /// casebook schema when left out.
    #[arg(long, env = "BATON_SCHEMA")]
    pub schema: Option<std::path::PathBuf>,

    /// SQLite's `synchronous` in WAL mode: `normal` (the default: a crash
    /// of the process loses nothing, a power cut may roll back the last
    /// commits) or `full` (every acknowledged write survives a power cut,
    /// at a cost; see docs/operations.md). Fencing tokens only grow either way.
    #[arg(
        long,
        env = "BATON_SQLITE_SYNCHRONOUS",
        default_value = "normal",
        value_enum
    )]
    pub sqlite_synchronous: SqliteSynchronous,
}

/// SQLite's durability in WAL mode (`PRAGMA synchronous`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SqliteSynchronous {
    #[default]
    Normal,
    Full,
}

impl SqliteSynchronous {
    pub fn pragma(self) -> &'static str {
        match self {
            SqliteSynchronous::Normal => "NORMAL",
            SqliteSynchronous::Full => "FULL",
        }
    }
}

/// Everything `baton serve` needs.
#[derive(Args, Clone, Debug)]
pub struct Settings {
    #[command(flatten)]
    pub database: DatabaseSettings,

    /// Address to listen on.
    #[arg(long, env = "BATON_BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,

    /// HS256 secret for the JWTs, at least 32 bytes. Required unless --dev
    /// or --demo.
    #[arg(long, env = "BATON_JWT_SECRET", hide_env_values = true)]
    pub jwt_secret: Option<String>,

    /// How long a login token is valid.
    #[arg(long, env = "BATON_TOKEN_TTL", default_value = "12h", value_parser = duration)]
    pub token_ttl: Duration,

    /// A lock's lease: acquire, refresh and the holder's writes extend it this far.
    #[arg(long, env = "BATON_LOCK_TTL", default_value = "30s", value_parser = duration)]
    pub lock_ttl: Duration,

    /// How often an open edits channel is pinged.
    #[arg(long, env = "BATON_HEARTBEAT_INTERVAL", default_value = "5s", value_parser = duration)]
    pub heartbeat_interval: Duration,

    /// How long a closed tab keeps its locks, for reconnects.
    #[arg(long, env = "BATON_DISCONNECT_GRACE", default_value = "10s", value_parser = duration)]
    pub disconnect_grace: Duration,

    /// A lock without activity for this long is released.
    #[arg(long, env = "BATON_IDLE_TIMEOUT", default_value = "30m", value_parser = duration)]
    pub idle_timeout: Duration,

    /// How often expired and idle locks are released.
    #[arg(long, env = "BATON_REAPER_INTERVAL", default_value = "1s", value_parser = duration)]
    pub reaper_interval: Duration,

    /// Origins allowed by CORS, comma separated (`*` for any).
    #[arg(long, env = "BATON_CORS_ORIGINS", value_delimiter = ',')]
    pub cors_origins: Vec<String>,

    /// Largest request body accepted, in bytes.
    #[arg(long, env = "BATON_BODY_LIMIT", default_value_t = 1024 * 1024)]
    pub body_limit: usize,

    /// Names this instance in the presence table (default: generated at start).
    #[arg(long, env = "BATON_INSTANCE_ID")]
    pub instance_id: Option<String>,

    /// HTTP worker threads (default: one per core).
    #[arg(long, env = "BATON_WORKERS")]
    pub workers: Option<usize>,

    /// Failed sign-ins an account may have in a window; then it is refused
    /// (429), even with the right password, until the window has passed.
    #[arg(long, env = "BATON_LOGIN_ACCOUNT_LIMIT", default_value_t = 10)]
    pub login_account_limit: u32,

    /// Failed sign-ins one client address may have in a window.
    #[arg(long, env = "BATON_LOGIN_ADDRESS_LIMIT", default_value_t = 100)]
    pub login_address_limit: u32,

    /// The window failed sign-ins are counted in, from the first failure.
    #[arg(long, env = "BATON_LOGIN_WINDOW", default_value = "15m", value_parser = duration)]
    pub login_window: Duration,

    /// Most accounts and addresses the login throttle keeps count of: past
    /// it the oldest windows are dropped first, so what a flood of
    /// made-up emails can make baton hold stays bounded.
    #[arg(long, env = "BATON_LOGIN_TRACKED", default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(1..))]
    pub login_tracked: u32,

    /// Header a trusted reverse proxy puts the client address in (for
    /// example X-Forwarded-For; its last entry is used). Unset: the peer address.
    #[arg(long, env = "BATON_CLIENT_IP_HEADER")]
    pub client_ip_header: Option<String>,

    /// Threads that may hash passwords at once (sign-ins, password changes).
    #[arg(long, env = "BATON_PASSWORD_THREADS", default_value_t = 1)]
    pub password_threads: usize,

    /// Address for `GET /metrics` (Prometheus). Unset: no metrics. Never
    /// the public address.
    #[arg(long, env = "BATON_METRICS_BIND")]
    pub metrics_bind: Option<String>,

    /// On SIGTERM, how long in-flight requests may take to finish.
    #[arg(long, env = "BATON_SHUTDOWN_TIMEOUT", default_value = "10s", value_parser = duration)]
    pub shutdown_timeout: Duration,

    /// The fast path (PostgreSQL): the everyday acquire, release and card
    /// save as one statement each. `false` sends every such request down the
    /// general path, which answers the same (tests compare the two).
    #[arg(long, env = "BATON_LOCK_FAST_PATH", default_value_t = true, action = clap::ArgAction::Set)]
    pub lock_fast_path: bool,

    /// Audit rows older than this are deleted by the reaper, a small batch
    /// each `BATON_REAPER_INTERVAL` (e.g. `90d`). Unset: the trail is kept.
    #[arg(long, env = "BATON_AUDIT_RETENTION", value_parser = audit_retention)]
    pub audit_retention: Option<Duration>,

    /// SQLite: take a backup this often (e.g. `6h`). Unset: no scheduled
    /// backups (`baton backup FILE` still takes one).
    #[arg(long, env = "BATON_BACKUP_EVERY", value_parser = backup_every)]
    pub backup_every: Option<Duration>,

    /// Where scheduled backups go (default: `backups/` beside the database).
    #[arg(long, env = "BATON_BACKUP_DIR")]
    pub backup_dir: Option<std::path::PathBuf>,

    /// How many scheduled backups are kept, the newest; older ones are deleted.
    #[arg(long, env = "BATON_BACKUP_KEEP", default_value = "7", value_parser = backup_keep)]
    pub backup_keep: u32,

    /// Most edits channels one user may have open on this instance; the
    /// next upgrade is refused (429 with `Retry-After`).
    #[arg(long, env = "BATON_CHANNELS_PER_USER", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub channels_per_user: u32,

    /// Whether any signed-in user may create a case (`POST /cases`);
    /// `false`: only site admins (cases then come from a host's
    /// `/auth/tokens` or an admin).
    #[arg(long, env = "BATON_USER_CASES", default_value_t = true, action = clap::ArgAction::Set)]
    pub user_cases: bool,

    /// Serving the `--demo` data: the sign-in page lists its people.
    #[arg(skip)]
    pub demo: bool,
}

impl Settings {
    /// The settings `baton serve --database-url URL` would start with in an
    /// empty environment, minus secret and CORS: the declared defaults, for
    /// tests and embedding. `BATON_*` variables and `DATABASE_URL` are not
    /// read, so an exported `BATON_LOCK_TTL` cannot change them (`baton
    /// serve` still reads the environment).
    pub fn defaults(database_url: &str) -> Settings {
        use clap::FromArgMatches;
        let matches = Self::command_without_env()
            .try_get_matches_from(["baton"])
            .expect("the declared defaults parse");
        let mut settings = Settings::from_arg_matches(&matches).expect("the declared defaults");
        settings.database.database_url = database_url.to_owned();
        settings.jwt_secret = None;
        settings.cors_origins.clear();
        settings
    }

    /// The `serve` arguments with their `env = …` sources removed.
    fn command_without_env() -> clap::Command {
        Settings::augment_args(clap::Command::new("baton")).mut_args(|arg| arg.env(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set in the copy of the test binary that
    /// [`defaults_ignore_the_environment`] starts.
    const CHILD: &str = "BATON_CONFIG_TEST_CHILD";

    #[test]
    fn defaults_are_the_declared_ones() {
        let settings = Settings::defaults("some.sqlite3");
        assert_eq!(settings.database.database_url, "some.sqlite3");
        assert_eq!(settings.database.db_pool_size, 16);
        assert_eq!(settings.database.db_timeout, Duration::from_secs(5));
        assert_eq!(settings.bind, "127.0.0.1:8080");
        assert_eq!(settings.token_ttl, Duration::from_secs(12 * 3600));
        assert_eq!(settings.lock_ttl, Duration::from_secs(30));
        assert_eq!(settings.heartbeat_interval, Duration::from_secs(5));
        assert_eq!(settings.disconnect_grace, Duration::from_secs(10));
        assert_eq!(settings.idle_timeout, Duration::from_secs(30 * 60));
        assert_eq!(settings.reaper_interval, Duration::from_secs(1));
        assert_eq!(settings.body_limit, 1024 * 1024);
        assert_eq!(settings.login_account_limit, 10);
        assert_eq!(settings.login_address_limit, 100);
        assert_eq!(settings.login_window, Duration::from_secs(15 * 60));
        assert_eq!(settings.login_tracked, 100_000);
        assert_eq!(settings.password_threads, 1);
        assert_eq!(settings.shutdown_timeout, Duration::from_secs(10));
        assert!(settings.jwt_secret.is_none());
        assert!(settings.cors_origins.is_empty());
        assert!(settings.instance_id.is_none());
        assert!(settings.workers.is_none());
        assert!(settings.client_ip_header.is_none());
        assert!(settings.metrics_bind.is_none());
        assert!(settings.lock_fast_path);
        assert!(settings.audit_retention.is_none());
        assert!(settings.backup_every.is_none());
        assert!(settings.backup_dir.is_none());
        assert_eq!(settings.backup_keep, 7);
        assert_eq!(settings.channels_per_user, 20);
        assert!(settings.user_cases);
        assert_eq!(
            settings.database.sqlite_synchronous,
            SqliteSynchronous::Normal
        );
        assert!(!settings.demo);
    }

    #[test]
    fn the_defaults_command_has_no_environment_source() {
        let with_env: Vec<_> = Settings::command_without_env()
            .get_arguments()
            .filter(|arg| arg.get_env().is_some())
            .map(|arg| arg.get_id().to_string())
            .collect();
        assert!(
            with_env.is_empty(),
            "read from the environment: {with_env:?}"
        );
        // …while `baton serve` reads it.
        let serve = Settings::augment_args(clap::Command::new("baton"));
        let lock_ttl = serve
            .get_arguments()
            .find(|arg| arg.get_id() == "lock_ttl")
            .expect("lock_ttl argument");
        assert_eq!(
            lock_ttl.get_env(),
            Some(std::ffi::OsStr::new("BATON_LOCK_TTL"))
        );
    }

    /// Exporting variables in this process would race with the other
    /// tests' threads, so the test runs itself again in a child process with
    /// `BATON_*` (and `DATABASE_URL`) exported, and checks there.
    #[test]
    fn defaults_ignore_the_environment() {
        if std::env::var_os(CHILD).is_some() {
            assert_eq!(std::env::var("BATON_LOCK_TTL").as_deref(), Ok("1ms"));
            let settings = Settings::defaults("mine.sqlite3");
            assert_eq!(settings.lock_ttl, Duration::from_secs(30));
            assert_eq!(settings.bind, "127.0.0.1:8080");
            assert_eq!(settings.database.db_pool_size, 16);
            assert_eq!(settings.database.db_timeout, Duration::from_secs(5));
            assert_eq!(settings.database.database_url, "mine.sqlite3");
            assert!(settings.cors_origins.is_empty());
            assert!(settings.jwt_secret.is_none());
            return;
        }
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "config::tests::defaults_ignore_the_environment",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .env("BATON_LOCK_TTL", "1ms")
            .env("BATON_BIND", "0.0.0.0:1")
            .env("BATON_DB_POOL_SIZE", "1")
            .env("BATON_DB_TIMEOUT", "1ms")
            .env("BATON_CORS_ORIGINS", "https://evil.example.com")
            .env("BATON_JWT_SECRET", "from-the-environment")
            .env("DATABASE_URL", "postgres://elsewhere/db")
            .output()
            .expect("run the test binary");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "child failed: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.contains("1 passed"),
            "the child did not run the test: {stdout}"
        );
    }
}
