//! HS256 login tokens. `sub` is the user id, `jti` the token's row in
//! `auth_tokens` (see [`super::tokens`]), `exp` the row's expiry.

use std::time::Duration;

use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use super::AuthError;
use crate::models::UserId;

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    jti: String,
    iat: i64,
    exp: i64,
}

/// What a valid token says: whose it is and which row names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenClaims {
    pub user_id: UserId,
    pub token_id: i64,
}

/// The shortest `BATON_JWT_SECRET` baton takes: as long as HS256's hash.
/// A shorter one can be guessed offline from any token it signed, and then
/// anyone can sign themselves a site admin's token.
pub const MIN_SECRET_BYTES: usize = 32;

/// Refuses a secret shorter than [`MIN_SECRET_BYTES`].
pub fn check_secret(secret: &[u8]) -> Result<(), AuthError> {
    if secret.len() < MIN_SECRET_BYTES {
        return Err(AuthError::WeakSecret(secret.len()));
    }
    Ok(())
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
        validation.set_required_spec_claims(&["exp", "sub", "jti"]);
        validation.leeway = 5;
        JwtKeys {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            validation,
            ttl,
        }
    }

    /// How long a new token lives.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Signs a token for a row already recorded (use [`super::tokens::issue`]).
    pub fn sign(&self, claims: TokenClaims, expires_at: i64) -> Result<String, AuthError> {
        let claims = Claims {
            sub: claims.user_id.to_string(),
            jti: claims.token_id.to_string(),
            iat: chrono::Utc::now().timestamp(),
            exp: expires_at,
        };
        encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|e| AuthError::Signing(e.to_string()))
    }

    /// The claims of a token with a valid signature and expiry. Whether its
    /// row is still live is for the database to say.
    pub fn verify(&self, token: &str) -> Result<TokenClaims, AuthError> {
        self.verify_until(token).map(|(claims, _)| claims)
    }

    /// [`JwtKeys::verify`], with the token's `exp` (Unix seconds): an open
    /// channel ends when its token does.
    pub fn verify_until(&self, token: &str) -> Result<(TokenClaims, i64), AuthError> {
        let data = decode::<Claims>(token, &self.decoding, &self.validation)
            .map_err(|_| AuthError::InvalidToken)?;
        let user_id = UserId(
            data.claims
                .sub
                .parse()
                .map_err(|_| AuthError::InvalidToken)?,
        );
        let token_id = data
            .claims
            .jti
            .parse()
            .map_err(|_| AuthError::InvalidToken)?;
        Ok((TokenClaims { user_id, token_id }, data.claims.exp))
    }

    /// Signs and verifies one token. The JWT crate compiles without a crypto
    /// backend and only fails at first use; this makes that fail at start-up.
    pub fn self_check(&self) -> Result<(), AuthError> {
        let claims = TokenClaims {
            user_id: UserId(1),
            token_id: 1,
        };
        let token = self.sign(claims, chrono::Utc::now().timestamp() + 60)?;
        match self.verify(&token) {
            Ok(back) if back == claims => Ok(()),
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
    fn secrets_shorter_than_32_bytes_are_refused() {
        assert!(matches!(check_secret(b""), Err(AuthError::WeakSecret(0))));
        assert!(matches!(check_secret(b"a"), Err(AuthError::WeakSecret(1))));
        assert!(check_secret(&[b'x'; 31]).is_err());
        assert!(check_secret(&[b'x'; 32]).is_ok());
    }

    #[test]
    fn tokens_round_trip_and_reject_other_secrets() {
        let keys = JwtKeys::new(b"secret-one", Duration::from_secs(60));
        keys.self_check().unwrap();
        let claims = TokenClaims {
            user_id: UserId(42),
            token_id: 7,
        };
        let exp = chrono::Utc::now().timestamp() + 60;
        let token = keys.sign(claims, exp).unwrap();
        assert_eq!(keys.verify(&token).unwrap(), claims);
        let other = JwtKeys::new(b"secret-two", Duration::from_secs(60));
        assert!(other.verify(&token).is_err());
        assert!(keys.verify("garbage").is_err());
        let expired = keys.sign(claims, exp - 3600).unwrap();
        assert!(keys.verify(&expired).is_err());
    }
}
