//! API keys: made at random, shown once, stored as their SHA-256. A key has
//! 256 random bits, so a fast hash is enough (a slow one would only slow
//! every call down); the stored hash is compared in constant time.

use std::time::Duration;

use chrono::NaiveDateTime;
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::AuthError;
use crate::clock;
use crate::db::DbConn;
use crate::error::AppResult;
use crate::models::ApiKey;

/// What every key starts with, so that a key pasted where a user token
/// belongs (or the other way round) is recognised.
pub const PREFIX: &str = "baton_key_";

/// A key's name: `[a-z0-9_-]{1,64}`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// A new key and its hash: 32 random bytes, hex, after [`PREFIX`].
pub fn generate() -> (String, String) {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let key = format!("{PREFIX}{}", hex(&bytes));
    let hash = hash(&key);
    (key, hash)
}

/// A key's stored form: its SHA-256, hex.
pub fn hash(key: &str) -> String {
    hex(&Sha256::digest(key.as_bytes()))
}

/// Whether `key` hashes to `stored`, in time that does not depend on where
/// they differ.
pub fn matches(key: &str, stored: &str) -> bool {
    hash(key).as_bytes().ct_eq(stored.as_bytes()).into()
}

/// A request that presented an API key, checked for its form only (no
/// database): the key's hash, to look up in the request's transaction.
#[derive(Clone, Debug)]
pub struct KeyHolder {
    hash: String,
}

impl KeyHolder {
    /// The bearer credential, if it is a key: anything else (nothing, a
    /// user's token) is 401.
    pub fn from_bearer(credential: Option<&str>) -> Result<KeyHolder, AuthError> {
        match credential {
            Some(key) if key.starts_with(PREFIX) => Ok(KeyHolder { hash: hash(key) }),
            _ => Err(AuthError::MissingKey),
        }
    }

    /// The key's hash, for a statement that checks the key itself (the
    /// fast guard).
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// 401 unless the key is live now: one read per request, so a key
    /// revoked on any instance is refused at the next request. Records when
    /// it was last used, at most once a minute.
    pub fn check(&self, conn: &mut DbConn, now: NaiveDateTime) -> AppResult<()> {
        let (id, last_used_at) = self.live(conn)?;
        if last_used_at.is_none_or(|at| at < clock::before(now, Duration::from_secs(60))) {
            ApiKey::used(conn, id, now)?;
        }
        Ok(())
    }

    /// 401 unless the key is live now; writes nothing.
    pub fn verify(&self, conn: &mut DbConn) -> AppResult<()> {
        self.live(conn).map(|_| ())
    }

    /// The live key's id and last use.
    fn live(&self, conn: &mut DbConn) -> AppResult<(i64, Option<NaiveDateTime>)> {
        let Some((id, stored, last_used_at)) = ApiKey::live_by_hash(conn, &self.hash)? else {
            return Err(AuthError::KeyRefused.into());
        };
        // The lookup was by hash already; this compares once more in
        // constant time, so that no answer depends on where two hashes differ.
        if !bool::from(self.hash.as_bytes().ct_eq(stored.as_bytes())) {
            return Err(AuthError::KeyRefused.into());
        }
        Ok((id, last_used_at))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_long_random_and_matches_only_its_own_hash() {
        let (key, stored) = generate();
        let (other, _) = generate();
        assert!(key.starts_with(PREFIX));
        assert_eq!(key.len(), PREFIX.len() + 64);
        assert_ne!(key, other);
        assert!(matches(&key, &stored));
        assert!(!matches(&other, &stored));
        assert_ne!(stored, key, "only the hash is stored");
    }

    #[test]
    fn names_are_short_lowercase_words() {
        for good in ["billing", "host-node_2", "a"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "Billing", "with space", "ünï", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
