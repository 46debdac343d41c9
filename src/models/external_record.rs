//! The records of external types (`store = "external"`): they live in a
//! team's own database, and baton only names them, by (type, case, param).
//! Each gets an id here the first time it is locked, so that locks, lines
//! and the audit trail hold it like any record. An external record baton
//! never locked has no row, and nobody holds it.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::schema::external_records;
use crate::db::DbConn;
use crate::models::{Case, CaseId};

#[derive(Queryable, Selectable, Clone, Debug, PartialEq)]
#[diesel(table_name = external_records)]
pub struct ExternalRecord {
    pub id: i64,
    pub record_type: String,
    pub case_id: CaseId,
    /// What the host calls it (`inv-2031`): 1–200 of `A-Za-z0-9._:-`.
    pub param: String,
    pub created_at: NaiveDateTime,
}

/// Whether `param` can name an external record: 1–200 characters of
/// `A-Za-z0-9._:-`.
pub fn valid_param(param: &str) -> bool {
    (1..=200).contains(&param.len())
        && param
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

impl ExternalRecord {
    /// The record of type `record_type` that case `case_id` calls `param`,
    /// if it was ever locked.
    pub fn named(
        conn: &mut DbConn,
        record_type: &str,
        case_id: CaseId,
        param: &str,
    ) -> QueryResult<Option<ExternalRecord>> {
        external_records::table
            .filter(external_records::record_type.eq(record_type))
            .filter(external_records::case_id.eq(case_id))
            .filter(external_records::param.eq(param))
            .select(ExternalRecord::as_select())
            .get_result(conn)
            .optional()
    }

    /// Like [`ExternalRecord::named`], giving it an id first if it has none:
    /// two instances naming it at once get the same row.
    pub fn name(
        conn: &mut DbConn,
        record_type: &str,
        case: &Case,
        param: &str,
        now: NaiveDateTime,
    ) -> QueryResult<ExternalRecord> {
        if let Some(found) = ExternalRecord::named(conn, record_type, case.id, param)? {
            return Ok(found);
        }
        let insert = diesel::insert_into(external_records::table)
            .values((
                external_records::record_type.eq(record_type),
                external_records::case_id.eq(case.id),
                external_records::param.eq(param),
                external_records::created_at.eq(now),
            ))
            .on_conflict_do_nothing();
        crate::on_backend!(conn, |c| insert.execute(c))?;
        ExternalRecord::named(conn, record_type, case.id, param)?.ok_or(diesel::NotFound)
    }

    pub fn find(
        conn: &mut DbConn,
        record_type: &str,
        id: i64,
    ) -> QueryResult<Option<ExternalRecord>> {
        external_records::table
            .filter(external_records::id.eq(id))
            .filter(external_records::record_type.eq(record_type))
            .select(ExternalRecord::as_select())
            .get_result(conn)
            .optional()
    }

    /// Like `find`, the row locked until the transaction ends (PostgreSQL),
    /// so that acquiring a lock queues behind a guard of the same record.
    pub fn find_for_update(
        conn: &mut DbConn,
        record_type: &str,
        id: i64,
    ) -> QueryResult<Option<ExternalRecord>> {
        crate::select_one_for_no_key_update!(
            conn,
            external_records::table
                .filter(external_records::id.eq(id))
                .filter(external_records::record_type.eq(record_type))
                .select(ExternalRecord::as_select())
        )
    }

    /// The records with these ids, by id; with `for_update` their rows
    /// locked in id order until the transaction ends (PostgreSQL).
    pub fn find_all(
        conn: &mut DbConn,
        record_type: &str,
        ids: &[i64],
        for_update: bool,
    ) -> QueryResult<Vec<ExternalRecord>> {
        macro_rules! by_ids {
            () => {
                external_records::table
                    .filter(external_records::record_type.eq(record_type))
                    .filter(external_records::id.eq_any(ids))
                    .order(external_records::id.asc())
                    .select(ExternalRecord::as_select())
            };
        }
        match conn {
            DbConn::Postgresql(c) if for_update => by_ids!().for_no_key_update().load(c),
            _ => by_ids!().load(conn),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn params_are_short_plain_names() {
        for good in ["inv-2031", "2031", "a.b_c:d-e", &"x".repeat(200)] {
            assert!(super::valid_param(good), "{good}");
        }
        for bad in ["", "with space", "inv/2031", "ünï", &"x".repeat(201)] {
            assert!(!super::valid_param(bad), "{bad}");
        }
    }
}
