//! The routes of a declared type as the example schemas' tests reach them:
//! create, show and update a record, the records `GET /cases/:slug` nests,
//! the demo data beside a schema file, and the destroys a watching tab is
//! told of.

use serde_json::{json, Value};

use super::{Resp, Tab, TestApp, TestUser};

/// A declared type's names in its routes, bodies and nesting.
pub struct DeclaredType {
    /// Its routes' plural: `book_components` in `/book_components/:id`.
    pub plural: &'static str,
    /// Its body's key: `{"bookComponent": {…}}`.
    pub body_key: &'static str,
    /// Where `GET /cases/:slug` nests its records: `bookComponents`.
    pub nest_key: &'static str,
}

impl TestApp {
    /// `POST /cases/:slug/<plural>` with `fields`, as `user`.
    pub async fn create_in_case(
        &self,
        user: &TestUser,
        slug: &str,
        ty: &DeclaredType,
        fields: Value,
    ) -> Resp {
        self.post(&format!("/cases/{slug}/{}", ty.plural))
            .by(user)
            .json(json!({ ty.body_key: fields }))
            .send()
            .await
    }

    /// `POST /<parent's plural>/:parent/<plural>` with `fields`, as `user`.
    pub async fn create_in(
        &self,
        user: &TestUser,
        parent: (&DeclaredType, i64),
        ty: &DeclaredType,
        fields: Value,
    ) -> Resp {
        let (parent_type, parent_id) = parent;
        self.post(&format!(
            "/{}/{parent_id}/{}",
            parent_type.plural, ty.plural
        ))
        .by(user)
        .json(json!({ ty.body_key: fields }))
        .send()
        .await
    }

    /// `PATCH /<plural>/:id` with `fields`, as `user`.
    pub async fn update_record(
        &self,
        user: &TestUser,
        ty: &DeclaredType,
        id: i64,
        fields: Value,
    ) -> Resp {
        self.patch(&format!("/{}/{id}", ty.plural))
            .by(user)
            .json(json!({ ty.body_key: fields }))
            .send()
            .await
    }

    /// The record as `GET /<plural>/:id` shows it to `user` (200).
    pub async fn record_now(&self, user: &TestUser, ty: &DeclaredType, id: i64) -> Value {
        self.get(&format!("/{}/{id}", ty.plural))
            .by(user)
            .send()
            .await
            .expect(200)
            .body
    }

    /// The case's records of the top type `ty`, as `GET /cases/:slug` nests
    /// them, in the order shown.
    pub async fn nested_in_case(
        &self,
        user: &TestUser,
        slug: &str,
        ty: &DeclaredType,
    ) -> Vec<Value> {
        let case = self
            .get(&format!("/cases/{slug}"))
            .by(user)
            .send()
            .await
            .expect(200);
        case.body[ty.nest_key]
            .as_array()
            .unwrap_or_else(|| panic!("no {} in {}", ty.nest_key, case.body))
            .clone()
    }

    /// The records of `child` inside the top record `parent`, as
    /// `GET /cases/:slug` nests them, in the order shown.
    pub async fn nested_in(
        &self,
        user: &TestUser,
        slug: &str,
        parent: (&DeclaredType, i64),
        child: &DeclaredType,
    ) -> Vec<Value> {
        let (parent_type, parent_id) = parent;
        let parents = self.nested_in_case(user, slug, parent_type).await;
        let parent = parents
            .iter()
            .find(|p| p["id"] == parent_id)
            .unwrap_or_else(|| panic!("{parent_id} not in {parents:?}"));
        parent[child.nest_key]
            .as_array()
            .unwrap_or_else(|| panic!("no {} in {parent}", child.nest_key))
            .clone()
    }

    /// Plants the demo data beside the schema file `schema` (`book.toml`:
    /// `book.demo.json`); the data.
    pub async fn seed_demo_beside(&self, schema: &str) -> Value {
        let data = baton::demo::demo_data(Some(std::path::Path::new(schema)));
        assert!(data.is_object(), "demo data beside {schema}: {data}");
        baton::demo::seed(&self.state.db, data.clone())
            .await
            .expect("the demo data fits the schema");
        data
    }

    /// The demo's case as `GET /cases/sample-case` shows it to Alice.
    pub async fn demo_case(&self) -> Value {
        let alice = self.signed_in("alice@example.com").await;
        self.get("/cases/sample-case")
            .by(&alice)
            .send()
            .await
            .expect(200)
            .body
    }
}

impl Tab {
    /// Waits until the tab is told of the destroy of every record of
    /// `records` (type, id), in any order; the frames, in the order told.
    pub async fn destroys_of(&mut self, records: &[(&str, i64)]) -> Vec<Value> {
        let mut untold = records.to_vec();
        let mut told = Vec::new();
        while !untold.is_empty() {
            let frame = self
                .next_where("the destroy of a deleted record", |f| {
                    f["type"] == "destroy"
                        && untold.iter().any(|(t, id)| {
                            f["watchable"]["type"] == *t && f["watchable"]["id"] == *id
                        })
                })
                .await;
            untold.retain(|(t, id)| {
                !(frame["watchable"]["type"] == *t && frame["watchable"]["id"] == *id)
            });
            told.push(frame);
        }
        told
    }
}

/// Milliseconds from timestamp `from` to timestamp `to` (RFC 3339).
pub fn millis_between(from: &Value, to: &Value) -> i64 {
    let at = |v: &Value| {
        chrono::DateTime::parse_from_rfc3339(v.as_str().expect("a timestamp")).expect("RFC 3339")
    };
    (at(to) - at(from)).num_milliseconds()
}
