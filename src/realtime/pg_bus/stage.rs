//! A transaction's event rows, written in one statement just before its
//! COMMIT: the columns bound as arrays, in the order the rows were staged.

use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamp};

use super::OutboxPayload;
use crate::db::{Event, Prepared};

/// A transaction's event rows, one statement: the columns bound as arrays,
/// in the order the rows were staged. A row with no audit entry takes the
/// database's clock.
const STAGE_EVENTS: &str = concat!(
    "INSERT INTO events (lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, \
       action, at, payload) \
     SELECT lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, action, \
       coalesce(at, ",
    crate::db_now!(),
    "), payload \
     FROM unnest($1::int8[], $2::text[], $3::int8[], $4::int8[], $5::int8[], $6::int8[], \
       $7::text[], $8::timestamp[], $9::text[]) WITH ORDINALITY \
       AS e(lock_id, lockable_type, lockable_id, case_id, actor_id, holder_id, action, at, \
         payload, n) \
     ORDER BY n"
);

/// [`STAGE_EVENTS`]'s arrays.
#[derive(Default)]
struct EventColumns<'a> {
    lock_id: Vec<Option<i64>>,
    lockable_type: Vec<Option<&'a str>>,
    lockable_id: Vec<Option<i64>>,
    case_id: Vec<Option<i64>>,
    actor_id: Vec<Option<i64>>,
    holder_id: Vec<Option<i64>>,
    action: Vec<Option<&'a str>>,
    at: Vec<Option<chrono::NaiveDateTime>>,
    payload: Vec<Option<String>>,
}

impl<'a> EventColumns<'a> {
    fn of(staged: &'a [Event]) -> EventColumns<'a> {
        let mut rows = EventColumns::default();
        for event in staged {
            let audit = event.audit.as_ref();
            rows.lock_id.push(audit.map(|a| a.lock_id));
            rows.lockable_type
                .push(audit.map(|a| a.lockable_type.as_str()));
            rows.lockable_id.push(audit.map(|a| a.lockable_id));
            rows.case_id.push(audit.map(|a| a.case_id));
            rows.actor_id.push(audit.and_then(|a| a.actor_id));
            rows.holder_id.push(audit.map(|a| a.holder_id));
            rows.action.push(audit.map(|a| a.action));
            rows.at.push(audit.map(|a| a.at));
            rows.payload.push(event.outgoing.as_ref().map(|o| {
                // Serializing these plain structs cannot fail.
                serde_json::to_string(&OutboxPayload::of(o)).unwrap_or_default()
            }));
        }
        rows
    }
}

/// Writes the rows of `staged`, ids in the order given.
pub(super) fn write_rows(pg: &mut PgConnection, staged: &[Event]) -> QueryResult<()> {
    let rows = EventColumns::of(staged);
    Prepared::new(STAGE_EVENTS, |q| {
        q.bind::<Array<Nullable<BigInt>>, _>(rows.lock_id)
            .bind::<Array<Nullable<Text>>, _>(rows.lockable_type)
            .bind::<Array<Nullable<BigInt>>, _>(rows.lockable_id)
            .bind::<Array<Nullable<BigInt>>, _>(rows.case_id)
            .bind::<Array<Nullable<BigInt>>, _>(rows.actor_id)
            .bind::<Array<Nullable<BigInt>>, _>(rows.holder_id)
            .bind::<Array<Nullable<Text>>, _>(rows.action)
            .bind::<Array<Nullable<Timestamp>>, _>(rows.at)
            .bind::<Array<Nullable<Text>>, _>(rows.payload)
    })
    .execute(pg)
    .map(|_| ())
}
