//! Argon2id password hashes in PHC string format.

use std::sync::Arc;
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

impl PasswordPool {
    pub fn new(threads: usize) -> PasswordPool {
        PasswordPool {
            permits: Arc::new(Semaphore::new(threads.max(1))),
        }
    }

    /// Whether `password` matches `hash`.
    pub async fn verify(&self, password: String, hash: String) -> AppResult<bool> {
        self.run(move || verify(&password, &hash)).await
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
    #[test]
    fn hashes_verify_only_their_password() {
        let h = super::hash("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(super::verify("correct horse", &h));
        assert!(!super::verify("battery staple", &h));
        assert!(!super::verify("correct horse", "not a hash"));
    }
}
