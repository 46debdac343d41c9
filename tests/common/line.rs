//! Waiting-line helpers: the `wait: true` request, a waiting tab's view of
//! its grant, and a check of everything a watching tab saw of the lines.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};

use super::Tab;

/// `{"lock": {"lockableType": …, "lockableParam": …, "wait": true}}`
pub fn wait_body(lockable_type: &str, id: i64) -> Value {
    json!({ "lock": { "lockableType": lockable_type, "lockableParam": id.to_string(), "wait": true } })
}

/// The record a lock or waiter frame is about, as `Type/param`.
pub fn record_of(frame: &Value) -> String {
    let lockable = &frame["watchable"]["lockable"];
    format!(
        "{}/{}",
        lockable["type"].as_str().unwrap_or("?"),
        lockable["param"].as_str().unwrap_or("?")
    )
}

/// Whether a frame is a change of a lock or a waiter (not of a record, not
/// presence).
pub fn is_line_change(frame: &Value) -> bool {
    matches!(
        frame["type"].as_str(),
        Some("create" | "update" | "destroy")
    ) && matches!(frame["watchable"]["type"].as_str(), Some("Lock" | "Waiter"))
}

/// A hand-off as one tab saw it: the frames just before and just after the
/// `destroy` (reason `granted`) of a waiter, among the frames about its record.
#[derive(Debug)]
pub struct Grant {
    /// Expected: the old lock's `destroy`.
    pub ended: Value,
    /// The waiter's `destroy`.
    pub granted: Value,
    /// Expected: the new lock's `create`, for the waiter's tab.
    pub created: Value,
}

impl Grant {
    /// Asserts the hand-off broadcast of the contract — the old lock's
    /// `destroy` (`reason`), the waiter's `destroy` (`granted`), the new
    /// lock's `create` for the waiter's tab and user, in that order, all
    /// tagged with the session that ended the old lock — and returns the
    /// new lock.
    #[track_caller]
    pub fn assert_hand_off(&self, waiter: &Value, reason: &str) -> &Value {
        let Grant {
            ended,
            granted,
            created,
        } = self;
        let record = format!(
            "{}/{}",
            waiter["lockable"]["type"].as_str().unwrap(),
            waiter["lockable"]["param"].as_str().unwrap()
        );
        let context = format!(
            "hand-off to waiter {}:\n  before: {ended}\n  waiter: {granted}\n  after:  {created}",
            waiter["id"]
        );
        assert_eq!(granted["watchable"]["reason"], "granted", "{context}");
        assert_eq!(
            (ended["type"].as_str(), ended["watchable"]["type"].as_str()),
            (Some("destroy"), Some("Lock")),
            "the frame before the grant is not the old lock's destroy; {context}"
        );
        assert_eq!(ended["watchable"]["reason"], reason, "{context}");
        assert_eq!(record_of(ended), record, "{context}");
        assert_eq!(
            (
                created["type"].as_str(),
                created["watchable"]["type"].as_str()
            ),
            (Some("create"), Some("Lock")),
            "the frame after the grant is not the new lock's create; {context}"
        );
        assert_eq!(record_of(created), record, "{context}");
        assert_eq!(
            created["watchable"]["sessionId"], waiter["sessionId"],
            "the new lock is not the waiting tab's; {context}"
        );
        assert_eq!(
            created["watchable"]["user"]["id"], waiter["user"]["id"],
            "{context}"
        );
        assert_ne!(
            created["watchable"]["id"], ended["watchable"]["id"],
            "a hand-off makes a new lock (new token); {context}"
        );
        // A release is tagged with the releasing tab: the old lock's.
        if reason == "released" {
            let releaser = &ended["watchable"]["sessionId"];
            for frame in [ended, granted, created] {
                assert_eq!(
                    &frame["editorSessionId"], releaser,
                    "frames of one hand-off carry the releaser's session; {context}"
                );
            }
        }
        &created["watchable"]
    }

    /// The new lock's id.
    pub fn lock_id(&self) -> i64 {
        self.created["watchable"]["id"]
            .as_i64()
            .unwrap_or_else(|| panic!("no lock id in {}", self.created))
    }
}

impl Tab {
    /// Reads this tab's frames until the `destroy` of `waiter` (its JSON) and
    /// returns it with the frames about the same record just before and just
    /// after it. Panics if the waiter leaves for another reason than a grant.
    pub async fn await_grant(&mut self, waiter: &Value) -> Grant {
        match self.await_waiter_end(waiter).await {
            Ok(grant) => grant,
            Err(frame) => panic!(
                "waiter {} left its line without its grant: {frame}",
                waiter["id"]
            ),
        }
    }

    /// Reads this tab's frames until the `destroy` of `waiter`: the hand-off
    /// around it when its reason is `granted`, else the `destroy` itself.
    pub async fn await_waiter_end(&mut self, waiter: &Value) -> Result<Grant, Value> {
        let waiter_id = waiter["id"].clone();
        let record = format!(
            "{}/{}",
            waiter["lockable"]["type"].as_str().unwrap(),
            waiter["lockable"]["param"].as_str().unwrap()
        );
        let what = format!("end of waiter {waiter_id}");
        let about_record = |f: &Value| is_line_change(f) && record_of(f) == record;
        let mut previous = Value::Null;
        loop {
            let frame = self.next_where(&what, about_record).await;
            if frame["type"] == "destroy"
                && frame["watchable"]["type"] == "Waiter"
                && frame["watchable"]["id"] == waiter_id
            {
                if frame["watchable"]["reason"] != "granted" {
                    return Err(frame);
                }
                let created = self
                    .next_where(
                        &format!("lock after the grant of {waiter_id}"),
                        about_record,
                    )
                    .await;
                return Ok(Grant {
                    ended: previous,
                    granted: frame,
                    created,
                });
            }
            previous = frame;
        }
    }
}

/// What a watching tab saw of the locks and lines of a case, checked.
#[derive(Debug, Default)]
pub struct LineHistory {
    /// Per record, the ids of its waiters in the order of their `granted`.
    pub granted: BTreeMap<String, Vec<i64>>,
    /// Per record, the ids of the waiters that joined it (`create`).
    pub joined: BTreeMap<String, Vec<i64>>,
    /// Every lock created, in order.
    pub locks: Vec<i64>,
    /// Waiter id → the reason of its `destroy`.
    pub ended: HashMap<i64, String>,
    /// The ids of the waiters `update`d (refreshed), in order.
    pub refreshed: Vec<i64>,
}

impl LineHistory {
    /// Checks a watching tab's frames (any order of records interleaved):
    /// per record, a lock `create` only when no lock is held and a `destroy`
    /// only of the lock held (never two holders); each waiter created once
    /// and destroyed at most once, updated only in between; each `granted`
    /// destroy between the old lock's `destroy` and the new lock's `create`
    /// for the waiter's tab, among the frames about that record.
    pub fn check(frames: &[Value]) -> LineHistory {
        let mut history = LineHistory::default();
        let mut by_record: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
        for frame in frames.iter().filter(|f| is_line_change(f)) {
            // Lock updates are renewals; a waiter's update is a refresh.
            if frame["type"] != "update" || frame["watchable"]["type"] == "Waiter" {
                by_record.entry(record_of(frame)).or_default().push(frame);
            }
        }
        for (record, frames) in &by_record {
            let mut holder: Option<i64> = None;
            let mut waiting: HashMap<i64, &Value> = HashMap::new();
            for (i, frame) in frames.iter().enumerate() {
                let watchable = &frame["watchable"];
                let id = watchable["id"].as_i64().expect("id");
                let context = || {
                    let from = i.saturating_sub(4);
                    let around: Vec<String> = frames[from..(i + 3).min(frames.len())]
                        .iter()
                        .map(|f| summary(f))
                        .collect();
                    format!("{record}, frame {i}; around it:\n  {}", around.join("\n  "))
                };
                match (frame["type"].as_str(), watchable["type"].as_str()) {
                    (Some("create"), Some("Lock")) => {
                        assert_eq!(
                            holder,
                            None,
                            "lock {id} created while lock {holder:?} held the record: {}",
                            context()
                        );
                        holder = Some(id);
                        history.locks.push(id);
                    }
                    (Some("destroy"), Some("Lock")) => {
                        assert_eq!(
                            holder,
                            Some(id),
                            "destroy of lock {id}, which does not hold the record: {}",
                            context()
                        );
                        holder = None;
                    }
                    (Some("create"), Some("Waiter")) => {
                        assert!(
                            waiting.insert(id, watchable).is_none()
                                && !history.ended.contains_key(&id),
                            "waiter {id} created twice: {}",
                            context()
                        );
                        history.joined.entry(record.clone()).or_default().push(id);
                    }
                    (Some("update"), Some("Waiter")) => {
                        assert!(
                            waiting.contains_key(&id),
                            "update of waiter {id}, which is not in line (never joined, or \
                             ended already as {:?}): {}",
                            history.ended.get(&id),
                            context()
                        );
                        history.refreshed.push(id);
                    }
                    (Some("destroy"), Some("Waiter")) => {
                        let reason = watchable["reason"].as_str().unwrap_or("?").to_owned();
                        assert!(
                            waiting.remove(&id).is_some(),
                            "destroy ({reason}) of waiter {id}, which is not in line \
                             (never joined, or ended already as {:?}): {}",
                            history.ended.get(&id),
                            context()
                        );
                        if reason == "granted" {
                            let grant = Grant {
                                ended: i.checked_sub(1).map_or(Value::Null, |p| frames[p].clone()),
                                granted: (*frame).clone(),
                                created: frames.get(i + 1).map_or(Value::Null, |f| (*f).clone()),
                            };
                            let reason = grant.ended["watchable"]["reason"]
                                .as_str()
                                .unwrap_or("released")
                                .to_owned();
                            grant.assert_hand_off(watchable, &reason);
                            history.granted.entry(record.clone()).or_default().push(id);
                        }
                        history.ended.insert(id, reason);
                    }
                    other => panic!("unexpected frame {other:?}: {}", context()),
                }
            }
        }
        history
    }

    /// Asserts that every record's grants went in join order: the waiters
    /// granted, in the order of their grants, have ascending ids.
    #[track_caller]
    pub fn assert_join_order(&self) {
        for (record, granted) in &self.granted {
            let mut sorted = granted.clone();
            sorted.sort_unstable();
            assert_eq!(
                granted, &sorted,
                "{record}: waiters granted out of join order"
            );
        }
    }
}

/// One line per frame, for failure messages.
pub fn summary(frame: &Value) -> String {
    let w = &frame["watchable"];
    format!(
        "{} {} {} session={} reason={} editor={}",
        frame["type"].as_str().unwrap_or("?"),
        w["type"].as_str().unwrap_or("?"),
        w["id"],
        w["sessionId"],
        w["reason"],
        frame["editorSessionId"]
    )
}
