use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::schema::{auth_tokens, cases, memberships, users};
use crate::db::DbConn;
use crate::models::{Case, CaseId, UserId};

#[derive(Queryable, Selectable, Clone, Debug)]
#[diesel(table_name = users)]
pub struct User {
    pub id: UserId,
    /// None only for a user a team's backend provisioned without one.
    pub email: Option<String>,
    pub name: String,
    /// Empty for a provisioned user: they sign in at their team's backend,
    /// never with `/auth/login`.
    pub password_hash: String,
    pub color: String,
    pub admin: bool,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    /// Set when the user was removed: they cannot sign in, and their old
    /// records and audit rows still name them.
    pub deactivated_at: Option<NaiveDateTime>,
    /// The id a team's own backend knows the user by (`POST /auth/tokens`).
    pub external_id: Option<String>,
}

/// The part of a user others see next to a lock or in presence.
#[derive(Queryable, Selectable, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[diesel(table_name = users)]
pub struct UserRef {
    pub id: UserId,
    pub name: String,
    pub color: String,
}

impl super::WireType for User {
    const TYPE: &'static str = "User";
    const TABLE: &'static str = "users";

    fn id(&self) -> i64 {
        self.id.get()
    }
}

impl super::WireType for UserRef {
    const TYPE: &'static str = "User";
    const TABLE: &'static str = "users";

    fn id(&self) -> i64 {
        self.id.get()
    }
}

#[derive(Insertable)]
#[diesel(table_name = users)]
struct NewUser<'a> {
    email: Option<&'a str>,
    name: &'a str,
    password_hash: &'a str,
    color: &'a str,
    admin: bool,
    created_at: NaiveDateTime,
    updated_at: NaiveDateTime,
    external_id: Option<&'a str>,
}

/// A change to a user; `None` leaves the column alone.
#[derive(AsChangeset, Default)]
#[diesel(table_name = users)]
pub struct UserChanges {
    pub name: Option<String>,
    pub password_hash: Option<String>,
    pub admin: Option<bool>,
}

/// Avatar colours with enough contrast for white initials.
const PALETTE: [&str; 12] = [
    "#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080", "#9a6324", "#800000",
    "#808000", "#000075", "#c2185b", "#00796b",
];

/// A stable colour for an email: the same person always gets the same one.
pub fn avatar_color(email: &str) -> &'static str {
    // FNV-1a: tiny, and stable across Rust releases (unlike `DefaultHasher`).
    let hash = email.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    });
    PALETTE[(hash % PALETTE.len() as u64) as usize]
}

/// Emails are compared without regard to case.
pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

impl User {
    pub fn find(conn: &mut DbConn, id: UserId) -> QueryResult<Option<User>> {
        users::table
            .find(id)
            .select(User::as_select())
            .get_result(conn)
            .optional()
    }

    /// The user of a live token: the token's row exists, belongs to the
    /// user, is neither revoked nor expired, and the user is active. One
    /// query, so a revocation on any instance takes effect at the next request.
    /// (The lock fast path reads the same in SQL, once per caller: `locks::fast_path::sql::READ_CALLER`.)
    pub fn find_by_token(
        conn: &mut DbConn,
        user_id: UserId,
        token_id: i64,
        now: NaiveDateTime,
    ) -> QueryResult<Option<User>> {
        users::table
            .inner_join(auth_tokens::table)
            .filter(auth_tokens::id.eq(token_id))
            .filter(users::id.eq(user_id))
            .filter(auth_tokens::revoked_at.is_null())
            .filter(auth_tokens::expires_at.gt(now))
            .filter(users::deactivated_at.is_null())
            .select(User::as_select())
            .get_result(conn)
            .optional()
    }

    /// Like [`User::find_by_token`], with the case and the user's role on
    /// it (`None` for a non-member) in the same query: one round trip for
    /// everything a request on a case asks about its caller.
    pub fn find_by_token_on_case(
        conn: &mut DbConn,
        user_id: UserId,
        token_id: i64,
        case_id: CaseId,
        now: NaiveDateTime,
    ) -> QueryResult<Option<(User, Case, Option<String>)>> {
        users::table
            .inner_join(auth_tokens::table)
            .inner_join(cases::table.on(cases::id.eq(case_id)))
            .left_join(
                memberships::table.on(memberships::case_id
                    .eq(cases::id)
                    .and(memberships::user_id.eq(users::id))),
            )
            .filter(auth_tokens::id.eq(token_id))
            .filter(users::id.eq(user_id))
            .filter(auth_tokens::revoked_at.is_null())
            .filter(auth_tokens::expires_at.gt(now))
            .filter(users::deactivated_at.is_null())
            .select((
                User::as_select(),
                Case::as_select(),
                memberships::role.nullable(),
            ))
            .get_result(conn)
            .optional()
    }

    /// Any user with this email, removed ones included (their email stays taken).
    pub fn find_by_email(conn: &mut DbConn, email: &str) -> QueryResult<Option<User>> {
        users::table
            .filter(users::email.eq(normalize_email(email)))
            .select(User::as_select())
            .get_result(conn)
            .optional()
    }

    /// How many users have none of these emails (removed ones, and users a
    /// team's backend provisioned without an email, included).
    pub fn count_others(conn: &mut DbConn, emails: &[&str]) -> QueryResult<i64> {
        users::table
            .filter(users::email.is_null().or(users::email.ne_all(emails)))
            .count()
            .get_result(conn)
    }

    pub fn is_admin(conn: &mut DbConn, id: UserId) -> QueryResult<bool> {
        users::table
            .find(id)
            .select(users::admin)
            .get_result(conn)
            .optional()
            .map(|a| a.unwrap_or(false))
    }

    pub fn refs(conn: &mut DbConn, ids: &[UserId]) -> QueryResult<Vec<UserRef>> {
        users::table
            .filter(users::id.eq_any(ids))
            .select(UserRef::as_select())
            .load(conn)
    }

    pub fn create(
        conn: &mut DbConn,
        email: &str,
        name: &str,
        password_hash: &str,
        admin: bool,
        now: NaiveDateTime,
    ) -> QueryResult<User> {
        let email = normalize_email(email);
        diesel::insert_into(users::table)
            .values(NewUser {
                email: Some(&email),
                name: name.trim(),
                password_hash,
                color: avatar_color(&email),
                admin,
                created_at: now,
                updated_at: now,
                external_id: None,
            })
            .returning(users::all_columns)
            .get_result::<User>(conn)
    }

    /// The user a team's backend knows as `external_id`, removed ones included.
    pub fn find_by_external_id(conn: &mut DbConn, external_id: &str) -> QueryResult<Option<User>> {
        users::table
            .filter(users::external_id.eq(external_id))
            .select(User::as_select())
            .get_result(conn)
            .optional()
    }

    /// Creates a user a team's backend provisions: no password, maybe no
    /// email. Two requests creating the same one at once get the same row.
    pub fn create_external(
        conn: &mut DbConn,
        external_id: &str,
        name: &str,
        email: Option<&str>,
        now: NaiveDateTime,
    ) -> QueryResult<User> {
        let email = email.map(normalize_email);
        let insert = diesel::insert_into(users::table)
            .values(NewUser {
                email: email.as_deref(),
                name: name.trim(),
                password_hash: "",
                color: avatar_color(email.as_deref().unwrap_or(external_id)),
                admin: false,
                created_at: now,
                updated_at: now,
                external_id: Some(external_id),
            })
            .on_conflict(users::external_id)
            .do_nothing();
        crate::on_backend!(conn, |c| insert.execute(c))?;
        User::find_by_external_id(conn, external_id)?.ok_or(diesel::NotFound)
    }

    /// Sets a provisioned user's name and, when given, email.
    pub fn update_external(
        conn: &mut DbConn,
        id: UserId,
        name: &str,
        email: Option<&str>,
        now: NaiveDateTime,
    ) -> QueryResult<User> {
        let name = name.trim();
        match email.map(normalize_email) {
            Some(email) => diesel::update(users::table.find(id))
                .set((
                    users::name.eq(name),
                    users::email.eq(email),
                    users::updated_at.eq(now),
                ))
                .returning(users::all_columns)
                .get_result(conn),
            None => diesel::update(users::table.find(id))
                .set((users::name.eq(name), users::updated_at.eq(now)))
                .returning(users::all_columns)
                .get_result(conn),
        }
    }

    /// Whether the user signs in at their team's backend rather than here.
    pub fn is_external(&self) -> bool {
        self.external_id.is_some()
    }

    pub fn is_active(&self) -> bool {
        self.deactivated_at.is_none()
    }

    /// Changes what is given; `None` leaves a field as it is.
    pub fn update(
        conn: &mut DbConn,
        id: UserId,
        changes: &UserChanges,
        now: NaiveDateTime,
    ) -> QueryResult<User> {
        diesel::update(users::table.find(id))
            .set((changes, users::updated_at.eq(now)))
            .returning(users::all_columns)
            .get_result(conn)
    }

    /// Marks the user removed; false if they were already.
    pub fn deactivate(conn: &mut DbConn, id: UserId, now: NaiveDateTime) -> QueryResult<bool> {
        diesel::update(
            users::table
                .find(id)
                .filter(users::deactivated_at.is_null()),
        )
        .set((users::deactivated_at.eq(now), users::updated_at.eq(now)))
        .execute(conn)
        .map(|n| n > 0)
    }

    pub fn to_ref(&self) -> UserRef {
        UserRef {
            id: self.id,
            name: self.name.clone(),
            color: self.color.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn avatar_colors_are_stable_per_email() {
        assert_eq!(
            super::avatar_color("bob@example.com"),
            super::avatar_color("bob@example.com")
        );
        let distinct: std::collections::HashSet<_> = ["a@x", "b@x", "c@x", "d@x", "e@x", "f@x"]
            .iter()
            .map(|e| super::avatar_color(e))
            .collect();
        assert!(distinct.len() > 1);
    }
}
