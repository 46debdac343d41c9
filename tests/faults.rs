//! baton under database faults: connections cut in the middle of a lock
//! storm, added latency, a stall longer than `BATON_DB_TIMEOUT`, PostgreSQL
//! restarted under load, the event listener's connection cut; and, on both
//! backends, a pool with no free connection.
//!
//! Faults are made by a TCP proxy between baton and PostgreSQL
//! (`common::fault_proxy`), by PostgreSQL itself (`pg_terminate_backend`,
//! `pg_ctlcluster … restart`). For each the tests check that:
//!
//! - requests fail cleanly: a success, or 503 `unavailable` in the error
//!   envelope; never a 500, never slower than the timeout plus a margin;
//! - nothing is half-written: every lock has its audit row and its
//!   broadcast, every card's version is the one its last broadcast carried,
//!   and a save answered "nothing was changed" is nowhere;
//! - no record ever has two holders (clients' view and the audit trail);
//! - service resumes by itself once the fault ends (a fresh lock and save);
//! - an open tab misses no committed event: it sees it, late, or gets a
//!   `resync` frame.
//!
//! A PostgreSQL restart ends every connection of every test, so the tests
//! of this file run one at a time (one lock for all of them).

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use baton::config::Settings;
use common::fault_proxy::FaultProxy;
use common::{id, lock_body, Backend, Cast, Req, Resp, Tab, TestApp, TestUser};
use serde_json::{json, Value};

/// One fault at a time: a restart would break every other test's connections.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// `BATON_DB_TIMEOUT` in these tests.
const DB_TIMEOUT: Duration = Duration::from_secs(1);

/// Room, on a loaded 2-core machine, between the timeout and the answer
/// (HTTP, scheduling, the blocking pool). A bound, not a speed target.
const MARGIN: Duration = Duration::from_secs(5);

/// How long service may take to come back after a fault ends.
const RECOVERY: Duration = Duration::from_secs(60);

const SKIP: &str = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it";

fn admin_url() -> Option<String> {
    std::env::var("BATON_TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.is_empty())
}

/// Settings of every test here: a short database timeout.
fn bounded(s: &mut Settings, timeout: Duration) {
    s.database.db_timeout = timeout;
}

/// A baton (in process) whose every database connection goes through a
/// fault proxy, and the cast with three more cards.
async fn behind_proxy(timeout: Duration) -> Option<(TestApp, FaultProxy, Cast, Vec<i64>)> {
    let proxy = FaultProxy::to(&admin_url()?);
    let app = TestApp::start_with(Backend::Postgres, |s| {
        bounded(s, timeout);
        s.database.database_url = proxy.url(&s.database.database_url);
    })
    .await?;
    let (cast, cards) = seeded(&app).await;
    Some((app, proxy, cast, cards))
}

/// A baton connected to PostgreSQL directly.
async fn direct(timeout: Duration) -> Option<(TestApp, Cast, Vec<i64>)> {
    let app = TestApp::start_with(Backend::Postgres, |s| bounded(s, timeout)).await?;
    let (cast, cards) = seeded(&app).await;
    Some((app, cast, cards))
}

async fn seeded(app: &TestApp) -> (Cast, Vec<i64>) {
    let cast = app.cast().await;
    let mut cards = vec![cast.case.card_id];
    for i in 1..4 {
        cards.push(app.card(&cast.case, &format!("card {i}")).await);
    }
    (cast, cards)
}

/// A plain connection to the test database, beside baton (never through
/// the proxy).
async fn sql(db_url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(db_url, tokio_postgres::NoTls)
        .await
        .expect("connect to the test database");
    tokio::spawn(connection);
    client
}

// ---- Requests under a fault ----

/// Every answer a load gets during a fault, checked as it comes.
struct Answers {
    /// The slowest answer any request may give.
    bound: Duration,
    counts: Mutex<HashMap<(&'static str, u16), usize>>,
    slowest: Mutex<Duration>,
    /// Contents of saves answered 503 with nothing changed: they must
    /// never be stored nor broadcast.
    not_saved: Mutex<Vec<String>>,
}

impl Answers {
    fn new(timeout: Duration) -> Arc<Answers> {
        Arc::new(Answers {
            bound: timeout + MARGIN,
            counts: Default::default(),
            slowest: Mutex::new(Duration::ZERO),
            not_saved: Default::default(),
        })
    }

    /// Sends `req` and checks the answer: one of `ok`, or 503 `unavailable`
    /// with a message; within the bound.
    async fn send(&self, what: &'static str, req: Req, ok: &[u16]) -> Resp {
        let started = Instant::now();
        let resp = req.send().await;
        let took = started.elapsed();
        assert!(
            took <= self.bound,
            "{what} answered {} after {took:?}, beyond {:?}: {}",
            resp.status,
            self.bound,
            resp.body
        );
        if resp.status == 503 {
            assert_eq!(
                resp.body["error"]["code"], "unavailable",
                "{what}: {}",
                resp.body
            );
            // Every database 503 says whether anything changed.
            assert!(
                resp.body["error"]["message"].as_str().is_some_and(|m| m
                    .contains("nothing was changed")
                    || m.contains("may have been saved")),
                "{what}: a 503 that does not say whether anything changed: {}",
                resp.body
            );
        } else {
            assert!(
                ok.contains(&resp.status),
                "{what} answered {}: {}",
                resp.status,
                resp.body
            );
        }
        *self
            .counts
            .lock()
            .unwrap()
            .entry((what, resp.status))
            .or_default() += 1;
        let mut slowest = self.slowest.lock().unwrap();
        *slowest = (*slowest).max(took);
        resp
    }

    fn count(&self, what: &'static str, status: u16) -> usize {
        self.counts
            .lock()
            .unwrap()
            .get(&(what, status))
            .copied()
            .unwrap_or(0)
    }

    fn report(&self, scenario: &str) {
        let mut counts: Vec<_> = self.counts.lock().unwrap().clone().into_iter().collect();
        counts.sort();
        eprintln!(
            "{scenario}: slowest answer {:?} (bound {:?}); {counts:?}",
            *self.slowest.lock().unwrap(),
            self.bound
        );
    }
}

/// Whether a 503's message says the change may have been saved.
fn maybe_saved(resp: &Resp) -> bool {
    resp.body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("may have been saved"))
}

/// A lock storm that tolerates faults: `clients` tabs race for `cards`,
/// each cycle acquire → save under the lock → release, until `stop`.
/// Clients never see two holders of one card.
struct Load {
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    cycles: Arc<AtomicUsize>,
}

impl Load {
    fn start(
        app: &Arc<TestApp>,
        cast: &Cast,
        cards: &[i64],
        clients: usize,
        answers: &Arc<Answers>,
    ) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let cycles = Arc::new(AtomicUsize::new(0));
        let holders: Arc<Vec<AtomicI64>> =
            Arc::new(cards.iter().map(|_| AtomicI64::new(0)).collect());
        let cards = Arc::new(cards.to_vec());
        let editors = [cast.bob.clone(), cast.carol.clone()];
        let tasks = (0..clients)
            .map(|client| {
                let me = editors[client % 2].tab(&format!("fault-tab-{client}"));
                let (app, answers, stop, cycles, holders, cards) = (
                    app.clone(),
                    answers.clone(),
                    stop.clone(),
                    cycles.clone(),
                    holders.clone(),
                    cards.clone(),
                );
                actix_web::rt::spawn(async move {
                    let mut n = client;
                    // Cards whose acquire answered 503 "may have been saved".
                    let mut maybe_held = std::collections::HashSet::new();
                    while !stop.load(Ordering::SeqCst) {
                        n = n.wrapping_mul(31).wrapping_add(7);
                        let slot = n % cards.len();
                        let card = cards[slot];
                        let got = answers
                            .send(
                                "acquire",
                                app.post("/locks").by(&me).json(lock_body("Card", card)),
                                &[200, 201, 409],
                            )
                            .await;
                        if got.status == 503 && maybe_saved(&got) {
                            maybe_held.insert(card);
                        }
                        // 200 (this tab holds it already) only after such a 503.
                        assert!(
                            got.status != 200 || maybe_held.contains(&card),
                            "card {card}: 200 for a lock this tab was never granted: {}",
                            got.body
                        );
                        if !matches!(got.status, 200 | 201) {
                            let pause = 10 + (n % 40) as u64;
                            actix_web::rt::time::sleep(Duration::from_millis(pause)).await;
                            continue;
                        }
                        // 200: an earlier acquire of this tab answered 503
                        // but had committed; the tab holds the card now.
                        let token = id(&got.body);
                        let before = holders[slot].swap(token, Ordering::SeqCst);
                        assert_eq!(
                            before, 0,
                            "card {card} granted to lock {token} while lock {before} held it"
                        );

                        let content = format!("client {client} cycle {n} lock {token}");
                        let saved = answers
                            .send(
                                "save",
                                app.patch(&format!("/cards/{card}"))
                                    .by(&me)
                                    .header("Lock-Token", token.to_string())
                                    .json(json!({ "card": { "content": content } })),
                                &[200],
                            )
                            .await;
                        if saved.status == 503 && !maybe_saved(&saved) {
                            answers.not_saved.lock().unwrap().push(content);
                        }
                        let still = holders[slot].swap(0, Ordering::SeqCst);
                        assert_eq!(
                            still, token,
                            "card {card}: holder changed under lock {token}"
                        );

                        // Release until it is confirmed (204), or found done
                        // by an earlier attempt that answered 503 (404).
                        maybe_held.remove(&card);
                        let deadline = Instant::now() + RECOVERY;
                        let mut maybe_released = false;
                        loop {
                            let released = answers
                                .send(
                                    "release",
                                    app.delete(&format!("/locks/{token}")).by(&me),
                                    &[204, 404],
                                )
                                .await;
                            // 404 only after a 503 that said it may have happened.
                            assert!(
                                released.status != 404 || maybe_released,
                                "lock {token}: 404 on release: {}",
                                released.body
                            );
                            if released.status != 503 {
                                break;
                            }
                            maybe_released |= maybe_saved(&released);
                            assert!(Instant::now() < deadline, "lock {token} never released");
                            actix_web::rt::time::sleep(Duration::from_millis(100)).await;
                        }
                        cycles.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        Load {
            stop,
            tasks,
            cycles,
        }
    }

    fn cycles(&self) -> usize {
        self.cycles.load(Ordering::SeqCst)
    }

    /// Waits until `more` cycles more have completed (`limit` at most).
    async fn progresses(&self, more: usize, limit: Duration) {
        let target = self.cycles() + more;
        let deadline = Instant::now() + limit;
        while self.cycles() < target {
            assert!(
                Instant::now() < deadline,
                "the load made no progress within {limit:?} ({} cycles)",
                self.cycles()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn stop(self) -> usize {
        self.stop.store(true, Ordering::SeqCst);
        for task in self.tasks {
            task.await.expect("a client of the load failed");
        }
        self.cycles.load(Ordering::SeqCst)
    }
}

// ---- After a fault ----

/// Service is back: a fresh lock, save and release succeed (retried while
/// the database is still unavailable). Returns the lock's id.
async fn resumes(app: &TestApp, who: &TestUser, card: i64) -> i64 {
    let marker = format!("after the fault {}", uuid::Uuid::new_v4().simple());
    let deadline = Instant::now() + RECOVERY;
    let retry = |what: &str, resp: &Resp| {
        assert_eq!(resp.status, 503, "{what} after the fault: {}", resp.body);
        assert!(
            Instant::now() < deadline,
            "service did not resume within {RECOVERY:?}"
        );
    };
    let token = loop {
        let got = app
            .post("/locks")
            .by(who)
            .json(lock_body("Card", card))
            .send()
            .await;
        match got.status {
            200 | 201 => break id(&got.body),
            // A load's lock with an unknown outcome may still hold it.
            409 => assert!(
                Instant::now() < deadline,
                "card {card} stayed locked: {}",
                got.body
            ),
            _ => retry("lock", &got),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    loop {
        let saved = app
            .patch(&format!("/cards/{card}"))
            .by(who)
            .header("Lock-Token", token.to_string())
            .json(json!({ "card": { "content": marker } }))
            .send()
            .await;
        if saved.status == 200 {
            break;
        }
        retry("save", &saved);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    loop {
        let released = app.delete(&format!("/locks/{token}")).by(who).send().await;
        if released.status == 204 {
            break;
        }
        retry("release", &released);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    token
}

/// Everything the watching tab saw, up to the release of the lock `last`
/// (frames of one case arrive in commit order, so everything committed
/// before it has arrived by then).
async fn seen_until(tab: &mut Tab, last: i64) -> Vec<Value> {
    tab.collect_until("the release after the fault", RECOVERY, |f| {
        f["type"] == "destroy" && f["watchable"]["type"] == "Lock" && f["watchable"]["id"] == last
    })
    .await
}

/// The checks after every fault: the database holds nothing half-written,
/// no record had two holders at once, and the tab saw every committed
/// change (or was told to resync).
async fn consistent(app: &TestApp, case_id: i64, frames: &[Value], answers: &Answers) {
    let db = sql(&app.db_url).await;

    // Every lock has the audit row of its grant.
    let orphans: Vec<i64> = db
        .query(
            "SELECT l.id FROM locks l WHERE l.case_id = $1 AND NOT EXISTS ( \
               SELECT 1 FROM events e WHERE e.lock_id = l.id \
               AND e.action IN ('acquired', 'handed_off'))",
            &[&case_id],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(
        orphans.is_empty(),
        "locks without their audit row: {orphans:?}"
    );

    // Per record, the audit trail grants and ends one lock at a time.
    let audit = db
        .query(
            "SELECT lock_id, lockable_type, lockable_id, action FROM events \
             WHERE case_id = $1 AND action IS NOT NULL ORDER BY id",
            &[&case_id],
        )
        .await
        .unwrap();
    let mut open: HashMap<(String, i64), i64> = HashMap::new();
    let mut granted = Vec::new();
    let mut ended = Vec::new();
    for row in &audit {
        let (lock, kind, record, action): (i64, String, i64, String) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        match action.as_str() {
            "acquired" | "handed_off" => {
                let before = open.insert((kind.clone(), record), lock);
                assert!(
                    before.is_none(),
                    "{kind} {record}: lock {lock} granted while {before:?} held it"
                );
                granted.push(lock);
            }
            "queued" => {}
            _ => {
                let before = open.remove(&(kind.clone(), record));
                assert_eq!(
                    before,
                    Some(lock),
                    "{kind} {record}: lock {lock} ended ({action}) but {before:?} held it"
                );
                ended.push(lock);
            }
        }
    }

    // The tab saw every grant and every end, unless told to resync.
    let resyncs = frames.iter().filter(|f| f["type"] == "resync").count();
    let lock_frames = |kind: &str| -> Vec<i64> {
        frames
            .iter()
            .filter(|f| f["type"] == kind && f["watchable"]["type"] == "Lock")
            .filter_map(|f| f["watchable"]["id"].as_i64())
            .collect()
    };
    let (created, destroyed) = (lock_frames("create"), lock_frames("destroy"));
    if resyncs == 0 {
        let unseen: Vec<_> = granted.iter().filter(|l| !created.contains(l)).collect();
        assert!(unseen.is_empty(), "grants the tab never saw: {unseen:?}");
        let unseen: Vec<_> = ended.iter().filter(|l| !destroyed.contains(l)).collect();
        assert!(unseen.is_empty(), "ends the tab never saw: {unseen:?}");
    }
    // …and never a broadcast of something that did not commit.
    let phantom: Vec<_> = created.iter().filter(|l| !granted.contains(l)).collect();
    assert!(
        phantom.is_empty(),
        "locks broadcast but never granted: {phantom:?}"
    );

    // Each card's version is the one its last broadcast carried.
    let cards = db
        .query(
            "SELECT id, version, fields::jsonb ->> 'content' FROM records \
             WHERE record_type = 'Card' AND case_id = $1",
            &[&case_id],
        )
        .await
        .unwrap();
    let not_saved = answers.not_saved.lock().unwrap().clone();
    for row in &cards {
        let (card, version, content): (i64, i64, String) = (row.get(0), row.get(1), row.get(2));
        assert!(
            !not_saved.contains(&content),
            "card {card} holds a save answered 503: {content}"
        );
        let last = frames.iter().rfind(|f| {
            f["type"] == "update"
                && f["watchable"]["type"] == "Card"
                && f["watchable"]["id"] == card
        });
        match last {
            Some(frame) if resyncs == 0 || frame["watchable"]["version"] == version => {
                assert_eq!(
                    frame["watchable"]["version"], version,
                    "card {card}: last broadcast {frame}"
                );
                assert_eq!(
                    frame["watchable"]["content"],
                    content.as_str(),
                    "card {card}"
                );
            }
            None if version == 1 || resyncs > 0 => {}
            _ => panic!("card {card} is at version {version}; its last broadcast: {last:?}"),
        }
    }
    let broadcast_unsaved: Vec<_> = frames
        .iter()
        .filter(|f| {
            f["watchable"]["content"]
                .as_str()
                .is_some_and(|c| not_saved.iter().any(|n| n == c))
        })
        .collect();
    assert!(
        broadcast_unsaved.is_empty(),
        "saves answered 503 were broadcast: {broadcast_unsaved:?}"
    );
    eprintln!(
        "consistent: {} grants, {} ends, {} resync frame(s), {} saves answered 'nothing was changed'",
        granted.len(),
        ended.len(),
        resyncs,
        not_saved.len()
    );
}

/// A fault scenario's load: Rita watches the case from a tab while
/// `clients` clients lock and save the cards, every answer checked.
struct UnderLoad {
    tab: Tab,
    answers: Arc<Answers>,
    load: Load,
}

impl UnderLoad {
    async fn start(
        app: &Arc<TestApp>,
        cast: &Cast,
        cards: &[i64],
        clients: usize,
        timeout: Duration,
    ) -> UnderLoad {
        let (tab, _) = app.open_tab("c", &cast.rita.tab("rita-watching")).await;
        let answers = Answers::new(timeout);
        let load = Load::start(app, cast, cards, clients, &answers);
        UnderLoad { tab, answers, load }
    }

    /// After the fault: `more` cycles of the load, which then stops, its
    /// answers reported as `name`; a fresh save goes through (service
    /// resumed), and the watching tab saw everything committed, consistent
    /// with the database. Returns the load's cycles.
    async fn recovers(
        self,
        app: &TestApp,
        cast: &Cast,
        cards: &[i64],
        more: usize,
        name: &str,
    ) -> usize {
        let UnderLoad {
            mut tab,
            answers,
            load,
        } = self;
        load.progresses(more, RECOVERY).await;
        let cycles = load.stop().await;
        answers.report(name);
        let last = resumes(app, &cast.mia.tab("mia-after"), cards[0]).await;
        let frames = seen_until(&mut tab, last).await;
        consistent(app, cast.case.case_id, &frames, &answers).await;
        cycles
    }
}

// ---- The scenarios ----

/// Every connection cut, three times, in the middle of a lock storm; then
/// cut once more with new connections refused for a while.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn connections_cut_in_a_lock_storm() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some((app, proxy, cast, cards)) = behind_proxy(DB_TIMEOUT).await else {
        return eprintln!("{SKIP}");
    };
    let app = Arc::new(app);
    let run = UnderLoad::start(&app, &cast, &cards, 8, DB_TIMEOUT).await;
    run.load.progresses(20, RECOVERY).await;
    for _ in 0..3 {
        proxy.cut();
        run.load.progresses(5, RECOVERY).await;
    }
    // Cut, and new connections refused for three timeouts: 503s, no hang.
    let refused_before = run.answers.count("acquire", 503) + run.answers.count("save", 503);
    proxy.refuse();
    proxy.cut();
    tokio::time::sleep(DB_TIMEOUT * 3).await;
    proxy.heal();
    let refused =
        run.answers.count("acquire", 503) + run.answers.count("save", 503) - refused_before;
    eprintln!(
        "connections refused for {:?}: {refused} answers 503",
        DB_TIMEOUT * 3
    );
    assert!(refused > 0, "no 503 while connections were refused");
    let cycles = run
        .recovers(&app, &cast, &cards, 10, "connections cut")
        .await;
    assert!(cycles >= 35, "{cycles} cycles");
}

/// 200 ms added to every packet, both ways, for 10 s: slow answers, or 503
/// within the timeout; the load still gets through.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn latency_of_200ms_for_10s() {
    let _one = ONE_AT_A_TIME.lock().await;
    // Several round trips per request: a timeout that 200 ms each way can meet.
    let timeout = Duration::from_secs(5);
    let Some((app, proxy, cast, cards)) = behind_proxy(timeout).await else {
        return eprintln!("{SKIP}");
    };
    let app = Arc::new(app);
    let run = UnderLoad::start(&app, &cast, &cards, 4, timeout).await;
    run.load.progresses(10, RECOVERY).await;

    proxy.latency(Duration::from_millis(200));
    let started = Instant::now();
    let before = run.load.cycles();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let during = run.load.cycles() - before;
    proxy.heal();
    eprintln!(
        "latency: {during} cycles in {:?} of 200 ms per packet",
        started.elapsed()
    );
    assert!(during >= 1, "no cycle completed under 200 ms of latency");

    run.recovers(&app, &cast, &cards, 10, "latency").await;
}

/// Every byte held, both ways, for longer than any answer may take:
/// requests answer 503 within the timeout, the server aborts the
/// transactions left open, and service resumes when the traffic flows again.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn stall_longer_than_the_timeout() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some((app, proxy, cast, cards)) = behind_proxy(DB_TIMEOUT).await else {
        return eprintln!("{SKIP}");
    };
    let app = Arc::new(app);
    let run = UnderLoad::start(&app, &cast, &cards, 6, DB_TIMEOUT).await;
    run.load.progresses(20, RECOVERY).await;

    proxy.stall();
    let stalled = Instant::now();
    // A request during the stall: 503 within the bound (checked by `send`).
    let during = run
        .answers
        .send("during the stall", app.get("/cases/c").by(&cast.mia), &[])
        .await;
    assert_eq!(during.status, 503);
    // The transactions baton left open are aborted by the server, so no
    // row stays locked behind the stall.
    let db = sql(&app.db_url).await;
    let name = app.db_url.rsplit('/').next().unwrap().to_owned();
    let deadline = Instant::now() + DB_TIMEOUT * 4 + MARGIN;
    loop {
        let open: i64 = db
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 \
                 AND state LIKE 'idle in transaction%' AND state_change < now() - interval '2 seconds'",
                &[&name],
            )
            .await
            .unwrap()
            .get(0);
        if open == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{open} transaction(s) stay open behind the stall"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The cards can be written beside baton meanwhile.
    db.batch_execute(&format!(
        "SET lock_timeout = '{}ms'; UPDATE records SET position = position \
         WHERE record_type = 'Card' AND case_id = {}",
        (DB_TIMEOUT * 3).as_millis(),
        cast.case.case_id
    ))
    .await
    .expect("a card row stayed locked behind the stall");
    // Longer than any answer may take: a request held through it would fail.
    while stalled.elapsed() < DB_TIMEOUT + MARGIN + Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        run.answers.count("acquire", 503)
            + run.answers.count("save", 503)
            + run.answers.count("release", 503)
            > 0
    );
    proxy.heal();

    run.recovers(&app, &cast, &cards, 10, "stall").await;
}

/// Restarts the test PostgreSQL (`pg_ctlcluster`); on drop, makes sure it
/// runs again, whatever happened in between.
struct Restarter {
    version: String,
}

impl Restarter {
    /// `None` (saying why) where the cluster cannot be restarted from here.
    fn find() -> Option<Restarter> {
        let versions: Vec<String> = std::fs::read_dir("/etc/postgresql")
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        // SAFETY: geteuid has no preconditions and touches no memory.
        let root = unsafe { libc::geteuid() } == 0;
        match versions.as_slice() {
            [version] if root && which("pg_ctlcluster") && which("pg_isready") => Some(Restarter {
                version: version.clone(),
            }),
            _ => {
                eprintln!(
                    "skipped: restarting PostgreSQL needs root and one Debian cluster with \
                     pg_ctlcluster (clusters: {versions:?}, root: {root})"
                );
                None
            }
        }
    }

    fn ctl(&self, action: &str) -> bool {
        std::process::Command::new("pg_ctlcluster")
            .args(["--skip-systemctl-redirect", &self.version, "main", action])
            .status()
            .is_ok_and(|s| s.success())
    }

    fn ready() -> bool {
        std::process::Command::new("pg_isready")
            .args(["-h", "127.0.0.1", "-p", "5432", "-q"])
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Waits until PostgreSQL accepts connections (`limit` at most).
    fn wait_ready(limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if Self::ready() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }
}

impl Drop for Restarter {
    fn drop(&mut self) {
        if !Self::ready() && !Self::wait_ready(Duration::from_secs(5)) {
            self.ctl("start");
            Self::wait_ready(Duration::from_secs(60));
        }
    }
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// PostgreSQL really restarted under load: requests answer 503 while it is
/// down, the pool and the listener reconnect by themselves.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn postgres_restarted_under_load() {
    let _one = ONE_AT_A_TIME.lock().await;
    // Only the local cluster on the default port can be restarted from here.
    let local = |url: String| {
        let (host, port) = common::fault_proxy::host_port(&url);
        (["127.0.0.1", "localhost"].contains(&host.as_str()) && port == 5432).then_some(url)
    };
    let Some(restarter) = admin_url().and_then(local).and_then(|_| Restarter::find()) else {
        return eprintln!("{SKIP}, as root on a Debian PostgreSQL");
    };
    let timeout = Duration::from_secs(2);
    let Some((app, cast, cards)) = direct(timeout).await else {
        return eprintln!("{SKIP}");
    };
    let app = Arc::new(app);
    let run = UnderLoad::start(&app, &cast, &cards, 6, timeout).await;
    run.load.progresses(20, RECOVERY).await;

    let started = Instant::now();
    let restarted = tokio::task::spawn_blocking(move || {
        let ok = restarter.ctl("restart") && Restarter::wait_ready(Duration::from_secs(60));
        drop(restarter);
        ok
    })
    .await
    .unwrap();
    assert!(restarted, "PostgreSQL did not come back");
    eprintln!(
        "restart: PostgreSQL ready again after {:?}",
        started.elapsed()
    );

    run.recovers(&app, &cast, &cards, 20, "restart").await;
}

/// The event listener's connection killed again and again while saves
/// commit: it reconnects and the tab gets every save, in order (late), or
/// a resync frame.
#[actix_web::test]
#[cfg_attr(
    not(baton_postgres_tests),
    ignore = "PostgreSQL: set BATON_TEST_POSTGRES_URL to run it"
)]
async fn listener_connection_cut() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some((app, cast, cards)) = direct(DB_TIMEOUT).await else {
        return eprintln!("{SKIP}");
    };
    let (mut tab, _) = app.open_tab("c", &cast.rita.tab("rita-watching")).await;
    let db = sql(&app.db_url).await;
    let name = app.db_url.rsplit('/').next().unwrap().to_owned();
    let answers = Answers::new(DB_TIMEOUT);
    let bob = cast.bob.tab("bob-writing");
    let card = cards[1];

    let (db, name) = (&db, name.as_str());
    let listeners = || async move {
        db.query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2",
            &[&name, &baton::realtime::pg_bus::LISTENER_NAME],
        )
        .await
        .unwrap()
        .get::<_, i64>(0)
    };
    let kill = || async move {
        db.query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE datname = $1 AND application_name = $2",
            &[&name, &baton::realtime::pg_bus::LISTENER_NAME],
        )
        .await
        .unwrap()
        .get::<_, i64>(0)
    };
    let mut versions = Vec::new();
    let save = |content: String| {
        let req = app
            .patch(&format!("/cards/{card}"))
            .by(&bob)
            .json(json!({ "card": { "content": content } }));
        let answers = answers.clone();
        async move {
            let saved = answers.send("save", req, &[200]).await;
            (saved.status == 200).then(|| saved.body["version"].as_i64().unwrap())
        }
    };

    // Killed again and again, each time once it is back, with saves
    // committing while it is gone.
    let mut killed = 0;
    for round in 0..8 {
        let deadline = Instant::now() + Duration::from_secs(20);
        while listeners().await == 0 {
            assert!(
                Instant::now() < deadline,
                "the listener did not come back (round {round})"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        killed += kill().await;
        for i in 0..3 {
            versions.extend(save(format!("round {round} save {i}")).await);
        }
    }
    // However often it was cut before, it comes back as fast.
    let deadline = Instant::now() + Duration::from_secs(20);
    while listeners().await == 0 {
        assert!(Instant::now() < deadline, "the listener did not come back");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    killed += kill().await;
    let saved_at = Instant::now();
    let last = save("after the last cut".into()).await.expect("a save");
    versions.push(last);
    let mut frames = tab
        .collect_until("the save after the last cut", RECOVERY, |f| {
            f["type"] == "update"
                && f["watchable"]["id"] == card
                && f["watchable"]["version"] == last
        })
        .await;
    let late = saved_at.elapsed();
    eprintln!("listener cut: the save after the last cut reached the tab after {late:?}");
    assert!(
        late < Duration::from_secs(3),
        "the tab got the save after {late:?}"
    );
    answers.report("listener cut");
    assert_eq!(killed, 9, "listener connections cut");
    assert_eq!(versions.len(), 25, "saves");

    let last = resumes(&app, &cast.mia.tab("mia-after"), cards[0]).await;
    frames.extend(seen_until(&mut tab, last).await);
    let seen: Vec<i64> = frames
        .iter()
        .filter(|f| f["type"] == "update" && f["watchable"]["id"] == card)
        .map(|f| f["watchable"]["version"].as_i64().unwrap())
        .collect();
    let resyncs = frames.iter().filter(|f| f["type"] == "resync").count();
    eprintln!(
        "listener cut {killed} times: {} saves, the tab saw {} of them, {resyncs} resync frame(s)",
        versions.len(),
        seen.len()
    );
    if resyncs == 0 {
        assert_eq!(
            seen, versions,
            "the tab's versions of card {card}, in order"
        );
    }
    consistent(&app, cast.case.case_id, &frames, &answers).await;
}

// ---- Both backends ----

/// No pooled connection free for longer than the timeout: requests answer
/// 503 within it, a save given up on is never applied later, and service
/// resumes once a connection is free. On SQLite writes do not use the pool
/// (the writer has its own connection): the save goes through.
async fn pool_exhausted(backend: Backend) {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some((app, cast)) = async {
        let app = TestApp::start_with(backend, |s| {
            bounded(s, DB_TIMEOUT);
            s.database.db_pool_size = 1;
        })
        .await?;
        let cast = app.cast().await;
        Some((app, cast))
    }
    .await
    else {
        return eprintln!("{SKIP}");
    };
    let card = cast.case.card_id;
    let bob = cast.bob.tab("bob-tab");

    // Something holds the only connection for three timeouts.
    let pool = app.state.db.pool().clone();
    let (taken_tx, taken) = tokio::sync::oneshot::channel();
    let holder = std::thread::spawn(move || {
        let conn = pool.get().expect("the pool's connection");
        let _ = taken_tx.send(());
        std::thread::sleep(DB_TIMEOUT * 3);
        drop(conn);
    });
    taken.await.unwrap();

    let answers = Answers::new(DB_TIMEOUT);
    let read = answers
        .send("read", app.get("/cases/c").by(&bob), &[])
        .await;
    assert_eq!(read.status, 503);
    let message = read.body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("1s"),
        "the message says how long: {message}"
    );
    let save = answers
        .send(
            "save",
            app.patch(&format!("/cards/{card}"))
                .by(&bob)
                .json(json!({ "card": { "content": "while the pool was taken" } })),
            &[200],
        )
        .await;
    let (content, version) = match backend {
        Backend::Sqlite => {
            assert_eq!(save.status, 200, "{}", save.body);
            ("while the pool was taken", "\"2\"")
        }
        Backend::Postgres => {
            assert_eq!(save.status, 503, "{}", save.body);
            assert!(!maybe_saved(&save), "{}", save.body);
            ("first draft", "\"1\"")
        }
    };
    answers.report("pool exhausted");
    holder.join().unwrap();

    // Service resumes; the save given up on never happened.
    let deadline = Instant::now() + RECOVERY;
    let current = loop {
        let got = app.get("/cases/c").by(&bob).send().await;
        if got.status == 200 {
            break got;
        }
        assert_eq!(got.status, 503, "{}", got.body);
        assert!(Instant::now() < deadline, "service did not resume");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    tokio::time::sleep(DB_TIMEOUT).await;
    let card_now = &current.body["pages"][0]["cards"][0];
    assert_eq!(card_now["content"], content, "{card_now}");
    let lock = app.lock(&bob, "Card", card).await;
    app.patch(&format!("/cards/{card}"))
        .by(&bob)
        .header("Lock-Token", id(&lock).to_string())
        .header("If-Match", version)
        .json(json!({ "card": { "content": "after" } }))
        .send()
        .await
        .expect(200);
}

/// A save queued behind a long write to the same record (SQLite: the one
/// writer; PostgreSQL: another client's row lock) gives up after the
/// timeout with 503 and is never applied later.
async fn write_queued_behind_a_long_one(backend: Backend) {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(app) = TestApp::start_with(backend, |s| bounded(s, DB_TIMEOUT)).await else {
        return eprintln!("{SKIP}");
    };
    let cast = app.cast().await;
    let card = cast.case.card_id;
    let hold = DB_TIMEOUT * 3;

    // The long write: on SQLite baton's own (it holds the single writer),
    // on PostgreSQL another client's transaction holding the card's row.
    let (held_tx, held) = tokio::sync::oneshot::channel();
    let holder = match backend {
        Backend::Sqlite => {
            let db = app.state.db.clone();
            actix_web::rt::spawn(async move {
                let _ = db
                    .write(None, move |_tx| {
                        let _ = held_tx.send(());
                        std::thread::sleep(hold);
                        Ok::<_, baton::error::AppError>(())
                    })
                    .await;
            })
        }
        Backend::Postgres => {
            let other = sql(&app.db_url).await;
            actix_web::rt::spawn(async move {
                other
                    .batch_execute(&format!(
                        "BEGIN; UPDATE records SET position = position \
                         WHERE record_type = 'Card' AND id = {card}"
                    ))
                    .await
                    .unwrap();
                let _ = held_tx.send(());
                tokio::time::sleep(hold).await;
                other.batch_execute("ROLLBACK").await.unwrap();
            })
        }
    };
    held.await.unwrap();

    let answers = Answers::new(DB_TIMEOUT);
    let save = answers
        .send(
            "queued save",
            app.patch(&format!("/cards/{card}"))
                .by(&cast.bob)
                .json(json!({ "card": { "content": "given up on" } })),
            &[],
        )
        .await;
    assert!(!maybe_saved(&save), "{}", save.body);
    answers.report("queued behind a long write");
    holder.await.unwrap();

    // Once the long write is over, the given-up save still has not happened.
    tokio::time::sleep(DB_TIMEOUT).await;
    let current = app.get("/cases/c").by(&cast.bob).send().await.expect(200);
    let card_now = &current.body["pages"][0]["cards"][0];
    assert_eq!(card_now["content"], "first draft", "{card_now}");
    assert_eq!(card_now["version"], 1, "{card_now}");
}

on_both_backends!(pool_exhausted, write_queued_behind_a_long_one);
