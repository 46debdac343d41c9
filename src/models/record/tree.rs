//! The tree of records: what is inside a record, at any depth, and taking
//! those rows before a delete takes them all with it.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};

use super::{RecordRow, StoredKey, StoredRecord};
use crate::db::schema::records;
use crate::db::DbConn;
use crate::models::RecordId;

impl StoredRecord {
    /// Everything inside record `(type, id)` at any depth, as `(type, id)`,
    /// parents before their children; the record itself left out. One
    /// recursive query on either backend.
    pub fn descendants(
        conn: &mut DbConn,
        type_name: &str,
        id: i64,
    ) -> QueryResult<Vec<(String, i64)>> {
        #[derive(QueryableByName)]
        struct Inside {
            #[diesel(sql_type = Text)]
            record_type: String,
            #[diesel(sql_type = BigInt)]
            id: i64,
        }
        const INSIDE: &str = "WITH RECURSIVE inside(record_type, id, depth) AS ( \
               SELECT r.record_type, r.id, 1 FROM records r \
                WHERE r.parent_type = $1 AND r.parent_id = $2 \
               UNION ALL \
               SELECT r.record_type, r.id, i.depth + 1 FROM records r \
                 JOIN inside i ON r.parent_type = i.record_type AND r.parent_id = i.id) \
             SELECT record_type, id FROM inside ORDER BY depth, record_type, id";
        let rows: Vec<Inside> = crate::on_backend!(conn, |c| diesel::sql_query(INSIDE)
            .bind::<Text, _>(type_name)
            .bind::<BigInt, _>(id)
            .load(c))?;
        Ok(rows.into_iter().map(|r| (r.record_type, r.id)).collect())
    }

    /// Before record `(type, id)` is deleted with everything inside it:
    /// takes its row and every descendant's `FOR UPDATE` (PostgreSQL), a
    /// level at a time until no new one appeared, so that a record being
    /// added inside meanwhile either lands before (and is found) or waits
    /// and then finds its parent gone. Returns the descendants.
    pub fn lock_subtree(
        conn: &mut DbConn,
        type_name: &str,
        id: i64,
    ) -> QueryResult<Vec<(String, i64)>> {
        StoredRecord::lock_rows(conn, &[(type_name.to_owned(), id)])?;
        let mut locked: Vec<(String, i64)> = Vec::new();
        loop {
            let inside = StoredRecord::descendants(conn, type_name, id)?;
            let new: Vec<(String, i64)> = inside
                .iter()
                .filter(|key| !locked.contains(key))
                .cloned()
                .collect();
            if new.is_empty() || !matches!(conn, DbConn::Postgresql(_)) {
                return Ok(inside);
            }
            StoredRecord::lock_rows(conn, &new)?;
            locked.extend(new);
        }
    }

    /// Like `find`, the row read `FOR KEY SHARE` (PostgreSQL): a parent a
    /// record is added to, which its delete (`FOR UPDATE`) waits for.
    pub fn find_for_key_share(
        conn: &mut DbConn,
        key: StoredKey,
    ) -> QueryResult<Option<StoredRecord>> {
        macro_rules! by_key {
            () => {
                records::table
                    .find((key.ty.name.as_str(), key.id))
                    .select(RecordRow::as_select())
            };
        }
        let row: Option<RecordRow> = crate::on_backend!(conn,
            postgres: |c| by_key!().for_key_share().get_result(c).optional(),
            sqlite: |c| by_key!().get_result(c).optional(),
        )?;
        match row {
            Some(row) => StoredRecord::read(conn, row),
            None => Ok(None),
        }
    }

    /// Locks the rows of these records in (type, id) order (PostgreSQL).
    fn lock_rows(conn: &mut DbConn, keys: &[(String, i64)]) -> QueryResult<()> {
        let DbConn::Postgresql(pg) = conn else {
            return Ok(());
        };
        let mut sorted: Vec<&(String, i64)> = keys.iter().collect();
        sorted.sort();
        for (type_name, id) in sorted {
            records::table
                .find((type_name.as_str(), RecordId(*id)))
                .select(records::id)
                .for_update()
                .execute(pg)?;
        }
        Ok(())
    }

    /// Deletes these records (a deleted record's descendants).
    pub fn delete_all(conn: &mut DbConn, keys: &[(String, i64)]) -> QueryResult<()> {
        for (type_name, id) in keys {
            diesel::delete(records::table.find((type_name.as_str(), RecordId(*id))))
                .execute(conn)?;
        }
        Ok(())
    }
}
