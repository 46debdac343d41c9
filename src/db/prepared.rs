//! Raw SQL that the connection keeps prepared. diesel never caches a
//! `sql_query` (it cannot know the text is fixed), so PostgreSQL would parse
//! and plan the hot path's statements on every request. A [`Prepared`]
//! statement is prepared once per connection, keyed by its text. Its text is
//! `&'static str` and, by rule, a constant (`concat!` of fragments, as in
//! `crate::locks::fast_path::sql`): requests only ever supply binds.

use diesel::backend::Backend;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId, SqlQuery};
use diesel::sql_types::Untyped;
use diesel::{QueryResult, RunQueryDsl};

pub struct Prepared<Q>(Q);

impl<Q> Prepared<Q> {
    /// The statement `sql` with the binds `bind` adds, in order.
    pub fn new(sql: &'static str, bind: impl FnOnce(SqlQuery) -> Q) -> Prepared<Q> {
        Prepared(bind(diesel::sql_query(sql)))
    }
}

impl<Q> QueryId for Prepared<Q> {
    type QueryId = ();
    // Keyed by SQL text, as diesel does for any query without a static id.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q, DB> QueryFragment<DB> for Prepared<Q>
where
    DB: Backend,
    Q: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.0.walk_ast(pass)
    }

    fn is_safe_to_cache_prepared(&self, _backend: &DB) -> QueryResult<bool> {
        Ok(true)
    }
}

impl<Q> Query for Prepared<Q> {
    type SqlType = Untyped;
}

impl<Q, Conn> RunQueryDsl<Conn> for Prepared<Q> {}
