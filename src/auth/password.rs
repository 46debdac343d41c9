//! Argon2id password hashes in PHC string format.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::Argon2;
use tokio::sync::Semaphore;

use crate::error::{AppError, AppResult};

/// Argon2 on a bounded number of threads. Hashing is slow on purpose; with
/// no bound, a flood of sign-ins would take every blocking thread and every
/// core, and lock traffic and the channel would starve behind it.
#[derive(Clone)]
pub struct PasswordPool {
    permits: Arc<Semaphore>,
}

/// How long a sign-in waits for a hashing thread before it is told to retry.
const QUEUE_PATIENCE: Duration = Duration::from_secs(10);

/// The hash of a password nobody has, made once with the parameters of
/// every new hash: a sign-in for an account that has no password here (no
/// such email, a removed user, one a team's backend signs in) verifies
/// against it, so that it costs what a wrong password costs and its answer
/// time does not say whether the email is known.
static NOBODYS_HASH: LazyLock<String> = LazyLock::new(|| {
    let unguessable = uuid::Uuid::new_v4().to_string();
    hash(&unguessable).expect("argon2 hashes a UUID")
});

impl PasswordPool {
    pub fn new(threads: usize) -> PasswordPool {
        // Made now, so that the first such sign-in does not take longer.
        LazyLock::force(&NOBODYS_HASH);
        PasswordPool {
            permits: Arc::new(Semaphore::new(threads.max(1))),
        }
    }

    /// Whether `password` matches `hash`.
    pub async fn verify(&self, password: String, hash: String) -> AppResult<bool> {
        self.run(move || verify(&password, &hash)).await
    }

    /// As long as [`PasswordPool::verify`] of a wrong password, on the same
    /// threads, for a sign-in with no password to check: never a match.
    pub async fn verify_nobody(&self, password: String) -> AppResult<bool> {
        self.run(move || {
            std::hint::black_box(verify(&password, &NOBODYS_HASH));
            false
        })
        .await
    }

    pub async fn hash(&self, password: String) -> AppResult<String> {
        self.run(move || hash(&password))
            .await?
            .map_err(AppError::Unavailable)
    }

    async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> AppResult<T> {
        let busy = || {
            AppError::Unavailable("Too many sign-ins at once; try again in a few seconds.".into())
        };
        let _permit = tokio::time::timeout(QUEUE_PATIENCE, self.permits.acquire())
            .await
            .map_err(|_| busy())?
            .map_err(|_| busy())?;
        actix_web::web::block(f)
            .await
            .map_err(|_| AppError::Unavailable("The server is shutting down.".into()))
    }
}

pub fn hash(password: &str) -> Result<String, String> {
    Argon2::default()
        .hash_password(password.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

/// False for a wrong password and for a hash that cannot be parsed.
pub fn verify(password: &str, hash: &str) -> bool {
    Argon2::default()
        .verify_password(password.as_bytes(), hash)
        .is_ok()
}

#[cfg(test)]
mod tests {
    /// `$argon2id$v=19$m=…,t=…,p=…`: the algorithm, version and costs.
    fn parameters(hash: &str) -> String {
        hash.split('$').take(4).collect::<Vec<_>>().join("$")
    }

    #[test]
    fn nobodys_hash_costs_what_a_real_one_does_and_matches_nothing() {
        let real = super::hash("correct horse").unwrap();
        assert_eq!(parameters(&super::NOBODYS_HASH), parameters(&real));
        assert!(parameters(&real).contains("m="), "{real}");
        let pool = super::PasswordPool::new(1);
        let answered = actix_web::rt::System::new()
            .block_on(async { pool.verify_nobody("correct horse".into()).await });
        assert!(!answered.unwrap());
    }

    #[test]
    fn hashes_verify_only_their_password() {
        let h = super::hash("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(super::verify("correct horse", &h));
        assert!(!super::verify("battery staple", &h));
        assert!(!super::verify("correct horse", "not a hash"));
    }
}
