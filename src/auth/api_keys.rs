//! API keys: made at random, shown once, stored as their SHA-256. A key has
//! 256 random bits, so a fast hash is enough (a slow one would only slow
//! every call down); the stored hash is compared in constant time.

use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

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
