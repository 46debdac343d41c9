//! The PL/pgSQL functions baton makes at start (PostgreSQL), named by a hash
//! of their text. During a rolling upgrade instances of two releases serve
//! one database; each makes and calls its own functions, so neither replaces
//! the other's (a fixed name would leave whichever instance started last
//! deciding every instance's rules, against tables it may not know).
//! Functions of releases no longer running are left in place: they are a
//! few rows of `pg_proc`, and a later migration may drop them.

use std::sync::OnceLock;

use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection, QueryResult, RunQueryDsl};
use sha2::{Digest, Sha256};

/// The advisory lock under which functions are made: two instances starting
/// at once would otherwise race on the same `pg_proc` row.
const MAKING_FUNCTIONS: i64 = 4_242_001;

/// A function's text with its base name, which [`PgFunction::name`]
/// completes with the hash.
pub struct PgFunction {
    /// The name written in `definition` and `call`, e.g. `baton_fast_save`.
    base: &'static str,
    /// `CREATE OR REPLACE FUNCTION <base>(…) …`.
    definition: &'static str,
    /// The statement that calls it, e.g. `SELECT * FROM <base>($1, …)`.
    call: &'static str,
    named: OnceLock<Named>,
}

struct Named {
    name: String,
    definition: String,
    call: String,
}

impl PgFunction {
    pub const fn new(base: &'static str, definition: &'static str, call: &'static str) -> Self {
        PgFunction {
            base,
            definition,
            call,
            named: OnceLock::new(),
        }
    }

    /// `<base>_<first 16 hex digits of the definition's SHA-256>`.
    pub fn name(&'static self) -> &'static str {
        &self.named().name
    }

    /// The `CREATE OR REPLACE FUNCTION` statement under [`Self::name`].
    pub fn definition(&'static self) -> &'static str {
        &self.named().definition
    }

    /// The calling statement under [`Self::name`]: a fixed text, so it
    /// stays prepared on each connection (`crate::db::Prepared`).
    pub fn call(&'static self) -> &'static str {
        &self.named().call
    }

    fn named(&'static self) -> &'static Named {
        self.named.get_or_init(|| {
            let digest = Sha256::digest(self.definition.as_bytes());
            let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
            let name = format!("{}_{hash}", self.base);
            // The base name followed by `(`: the function itself, never a
            // longer name that starts with it.
            let at = |text: &str| text.replacen(&format!("{}(", self.base), &format!("{name}("), 1);
            Named {
                definition: at(self.definition),
                call: at(self.call),
                name,
            }
        })
    }
}

/// Makes `functions` unless they exist (one transaction, under an advisory
/// lock, so instances starting together do not race).
pub fn make(pg: &mut PgConnection, functions: &[&'static PgFunction]) -> QueryResult<()> {
    pg.transaction(|pg| {
        diesel::sql_query(format!("SELECT pg_advisory_xact_lock({MAKING_FUNCTIONS})"))
            .execute(pg)?;
        for function in functions {
            pg.batch_execute(function.definition())?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    static ADD: PgFunction = PgFunction::new(
        "baton_add",
        "CREATE OR REPLACE FUNCTION baton_add(a INT) RETURNS INT AS $$ SELECT baton_add_one(a) $$",
        "SELECT baton_add($1)",
    );
    static ADD_AGAIN: PgFunction = PgFunction::new(
        "baton_add",
        "CREATE OR REPLACE FUNCTION baton_add(a INT) RETURNS INT AS $$ SELECT a + 2 $$",
        "SELECT baton_add($1)",
    );

    #[test]
    fn the_name_carries_a_hash_of_the_text() {
        let name = ADD.name();
        assert!(name.starts_with("baton_add_"), "{name}");
        assert_eq!(name.len(), "baton_add_".len() + 16);
        assert_ne!(ADD.name(), ADD_AGAIN.name());
    }

    #[test]
    fn definition_and_call_use_the_hashed_name_and_nothing_else_changes() {
        let name = ADD.name();
        assert_eq!(
            ADD.definition(),
            format!(
                "CREATE OR REPLACE FUNCTION {name}(a INT) RETURNS INT AS $$ SELECT baton_add_one(a) $$"
            )
        );
        assert_eq!(ADD.call(), format!("SELECT {name}($1)"));
    }
}
