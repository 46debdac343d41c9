//! Argon2id password hashes in PHC string format.

use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::Argon2;

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
