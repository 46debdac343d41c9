//! Who is making a request: a caller whose token checked out, and the actor
//! it becomes once its user is loaded. (The HTTP extractors that build them
//! from a request live in `crate::http::extract`.)

use super::Rank;
use super::{AuthError, JwtKeys, TokenClaims};
use crate::clock;
use crate::db::{DbConn, Editor};
use crate::error::AppError;
use crate::models::TokenHolder;
use crate::models::{Case, CaseId, Role, Tab, User};

/// Who is making the request: the signed-in user and, when the browser tab
/// sent `X-Session-ID`, which tab.
#[derive(Clone, Debug)]
pub struct Actor {
    pub user: User,
    /// The login token's row: what logout ends.
    pub token_id: i64,
    pub session_id: Option<String>,
    pub user_agent: Option<String>,
}

/// A caller whose token checked out but whose user is not loaded yet. The
/// lock and record write routes take this and [`Caller::load`] the user in
/// their own transaction: one pooled connection and one trip to a database
/// thread per request instead of two.
#[derive(Clone, Debug)]
pub struct Caller {
    claims: TokenClaims,
    /// The token's `exp` (Unix seconds).
    expires_at: i64,
    session_id: Option<String>,
    user_agent: Option<String>,
}

impl Actor {
    /// The tab this request is from, if it sent `X-Session-ID`.
    pub fn tab(&self) -> Option<Tab> {
        self.session_id.as_ref().map(|session_id| Tab {
            user_id: self.user.id,
            session_id: session_id.clone(),
        })
    }

    /// The tab this request is from, as broadcasts name it.
    pub fn editor(&self) -> Option<Editor> {
        Some(Editor {
            user_id: self.user.id.get(),
            session_id: self.session_id.clone(),
        })
    }
}

impl Caller {
    /// Checks the bearer token's signature and expiry (no database).
    pub fn verify(
        jwt: &JwtKeys,
        token: Option<&str>,
        session_id: Option<String>,
        user_agent: Option<String>,
    ) -> Result<Caller, AppError> {
        let token = token
            .filter(|t| !t.is_empty())
            .ok_or(AuthError::MissingToken)?;
        let (claims, expires_at) = jwt.verify_until(token)?;
        Ok(Caller {
            claims,
            expires_at,
            session_id,
            user_agent,
        })
    }

    /// The actor, or 401 when the token was revoked or its user removed.
    pub fn load(self, conn: &mut DbConn) -> Result<Actor, AppError> {
        let TokenClaims { user_id, token_id } = self.claims;
        let user =
            User::find_by_token(conn, user_id, token_id, clock::now())?.ok_or(AuthError::Ended)?;
        Ok(Actor {
            user,
            token_id,
            session_id: self.session_id,
            user_agent: self.user_agent,
        })
    }

    /// The actor, the case and the actor's rank on it, in one query (the
    /// token's row and user as in [`Caller::load`], the case, the
    /// membership). 401 when the token is dead, 404 when the case is.
    pub fn load_on_case(
        self,
        conn: &mut DbConn,
        case_id: CaseId,
    ) -> Result<(Actor, Case, Option<Rank>), AppError> {
        let TokenClaims { user_id, token_id } = self.claims;
        let found = User::find_by_token_on_case(conn, user_id, token_id, case_id, clock::now())?;
        let Some((user, case, role)) = found else {
            // Which is it? The token first: 401 comes before 404.
            self.load(conn)?;
            return Err(AppError::not_found(format!(
                "Case {case_id} does not exist."
            )));
        };
        let rank = if user.admin {
            Some(Rank::SiteAdmin)
        } else {
            role.as_deref().and_then(Role::parse).map(Rank::Member)
        };
        let actor = Actor {
            user,
            token_id,
            session_id: self.session_id,
            user_agent: self.user_agent,
        };
        Ok((actor, case, rank))
    }

    /// The same caller, acting for this tab.
    pub fn in_session(self, session_id: Option<String>) -> Caller {
        Caller { session_id, ..self }
    }

    /// The tab this request is from, as broadcasts name it (the user as
    /// the token names them; a write that goes on checks the token).
    pub fn editor(&self) -> Option<Editor> {
        Some(Editor {
            user_id: self.claims.user_id.get(),
            session_id: self.session_id.clone(),
        })
    }

    /// When the token ends (Unix seconds): an edits channel opened with it
    /// is closed then.
    pub fn expires_at(&self) -> i64 {
        self.expires_at
    }

    /// The tab (browser session) the request came from, if it said.
    pub fn session_id(&self) -> Option<&String> {
        self.session_id.as_ref()
    }

    pub fn user_agent(&self) -> Option<&String> {
        self.user_agent.as_ref()
    }

    /// The user and token row the token names, for a statement that checks
    /// them itself (the lock fast path).
    pub fn token_holder(&self) -> TokenHolder {
        TokenHolder {
            user_id: self.claims.user_id,
            token_id: self.claims.token_id,
        }
    }
}
