//! HS256 login tokens. `sub` is the user id.

use std::time::Duration;

use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use super::AuthError;

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    iat: i64,
    exp: i64,
}

#[derive(Clone)]
pub struct JwtKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    ttl: Duration,
}

impl JwtKeys {
    pub fn new(secret: &[u8], ttl: Duration) -> JwtKeys {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_required_spec_claims(&["exp", "sub"]);
        validation.leeway = 5;
        JwtKeys {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            validation,
            ttl,
        }
    }

    pub fn issue(&self, user_id: i64) -> Result<String, AuthError> {
        let now = chrono::Utc::now().timestamp();
        let claims = Claims {
            sub: user_id.to_string(),
            iat: now,
            exp: now + self.ttl.as_secs() as i64,
        };
        encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|e| AuthError::Signing(e.to_string()))
    }

    /// The user id of a valid token.
    pub fn verify(&self, token: &str) -> Result<i64, AuthError> {
        let data = decode::<Claims>(token, &self.decoding, &self.validation)
            .map_err(|_| AuthError::InvalidToken)?;
        data.claims.sub.parse().map_err(|_| AuthError::InvalidToken)
    }

    /// Signs and verifies one token. The JWT crate compiles without a crypto
    /// backend and only fails at first use; this makes that fail at start-up.
    pub fn self_check(&self) -> Result<(), AuthError> {
        let token = self.issue(1)?;
        match self.verify(&token) {
            Ok(1) => Ok(()),
            _ => Err(AuthError::Signing(
                "a freshly signed token did not verify".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_reject_other_secrets() {
        let keys = JwtKeys::new(b"secret-one", Duration::from_secs(60));
        keys.self_check().unwrap();
        let token = keys.issue(42).unwrap();
        assert_eq!(keys.verify(&token).unwrap(), 42);
        let other = JwtKeys::new(b"secret-two", Duration::from_secs(60));
        assert!(other.verify(&token).is_err());
        assert!(keys.verify("garbage").is_err());
    }
}
