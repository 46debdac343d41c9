//! What the benchmarks share: a scratch PostgreSQL database and the HTTP
//! client of one browser tab.

use diesel::pg::PgConnection;
use diesel::prelude::*;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A fresh database `<prefix>_<random>` on the server of `admin_url`,
/// dropped (WITH (FORCE)) when this is.
pub struct ScratchPg {
    admin_url: String,
    name: String,
    /// The scratch database's URL.
    pub url: String,
}

impl ScratchPg {
    pub fn create(admin_url: &str, prefix: &str) -> Result<ScratchPg, BoxError> {
        let mut conn = PgConnection::establish(admin_url)
            .map_err(|e| format!("cannot connect to {admin_url}: {e}"))?;
        let name = format!("{prefix}_{:08x}", rand::random::<u32>());
        diesel::sql_query(format!("CREATE DATABASE {name}")).execute(&mut conn)?;
        Ok(ScratchPg {
            admin_url: admin_url.to_owned(),
            url: with_database(admin_url, &name),
            name,
        })
    }
}

impl Drop for ScratchPg {
    fn drop(&mut self) {
        let dropped = PgConnection::establish(&self.admin_url)
            .map_err(|e| e.to_string())
            .and_then(|mut conn| {
                diesel::sql_query(format!(
                    "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                    self.name
                ))
                .execute(&mut conn)
                .map_err(|e| e.to_string())
            });
        if let Err(e) = dropped {
            eprintln!("could not drop database {}: {e}", self.name);
        }
    }
}

/// `url` with its database name replaced by `name` (query string kept).
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (url, String::new()),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let server = match base[authority_start..].find('/') {
        Some(slash) => &base[..authority_start + slash],
        None => base,
    };
    format!("{server}/{name}{query}")
}

/// A keep-alive client that sends, with every request, the user's bearer
/// `token`, the tab's `X-Session-ID` and a JSON content type.
pub fn tab_client(
    token: &str,
    session_id: &str,
    builder: reqwest::ClientBuilder,
) -> Result<reqwest::Client, BoxError> {
    let mut headers = HeaderMap::new();
    headers.insert(
        AUTHORIZATION,
        HeaderValue::from_str(&format!("Bearer {token}"))?,
    );
    headers.insert("x-session-id", HeaderValue::from_str(session_id)?);
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(builder.default_headers(headers).build()?)
}

/// Creates a record of a declared type of the schema in force (its fields
/// as a create checks them) and returns its id.
pub fn plant(
    tx: &mut baton::db::Tx,
    type_name: &str,
    case_id: baton::models::CaseId,
    parent_id: Option<i64>,
    position: Option<i32>,
    fields: serde_json::Value,
) -> QueryResult<i64> {
    let ty = baton::schema::in_force()
        .get(type_name)
        .ok_or(diesel::result::Error::NotFound)?;
    let empty = serde_json::Map::new();
    let fields = ty
        .check_create(fields.as_object().unwrap_or(&empty))
        .map_err(|_| diesel::result::Error::NotFound)?;
    let place = baton::models::Place { case_id, parent_id };
    let (record, _) =
        baton::models::StoredRecord::create(tx.conn, ty, place, fields, position, tx.now)?;
    Ok(record.id.get())
}
