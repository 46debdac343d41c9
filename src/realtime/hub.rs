//! Fan-out inside one process. A tab past its welcome is *attached* to its
//! case: each committed frame is written straight into its connection's
//! queue by the publisher, one refcount of the serialized frame per tab and
//! no wake-up of the tab's own task, so a frame to a thousand tabs costs a
//! thousand queue pushes and the connections' own writes. Tabs still joining
//! (between their subscription and their welcome), and tabs whose queue was
//! full, read the case's bounded broadcast channel through their own task
//! instead, and attach again once they have caught up; one that falls a
//! whole channel behind sees `Lagged` and must resync. Open tabs also
//! register here so that a kick can reach them.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use actix_ws::Session;
use tokio::sync::{broadcast, oneshot};

use crate::db::{EventBus, Frame, KickReason, Outgoing, Tabs};
use crate::models::{CaseId, UserId};
use crate::views::ServerFrame;

/// How many frames a slow tab may fall behind before it must resync.
const CASE_BUFFER: usize = 256;

/// Why an open tab is told to close.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Closing {
    /// It may not stay (an admin closed it, its access or its token ended):
    /// the tab is told why and should not reconnect.
    Kicked(KickReason),
    /// This instance is shutting down: close with 1012 (service restart) so
    /// the tab reconnects, to another instance, within the grace.
    Restart,
}

/// Tells one open tab to close. A oneshot: the first word ends the tab, so
/// nothing after it is read, and it costs a tab far less memory than a
/// queue (an unbounded channel allocates a block of 32 slots up front).
pub type CloseSender = oneshot::Sender<Closing>;

/// Whose an open channel is: what a close can name it by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TabOwner {
    pub user_id: UserId,
    pub session_id: String,
    pub case_id: CaseId,
    /// The login token it was opened with.
    pub token_id: i64,
}

impl TabOwner {
    fn is_one_of(&self, tabs: &Tabs) -> bool {
        let user = self.user_id.get();
        match tabs {
            Tabs::Session { session, user: who } => {
                *session == self.session_id && who.is_none_or(|who| who == user)
            }
            Tabs::OnCase { user: who, case } => *who == user && *case == self.case_id.get(),
            Tabs::OfUser {
                user: who,
                except_token,
            } => *who == user && *except_token != Some(self.token_id),
            Tabs::Token { token } => *token == self.token_id,
            Tabs::OutsideCases { user: who, keep } => {
                *who == user && !keep.contains(&self.case_id.get())
            }
        }
    }
}

/// One open channel: its connection id, whose it is, and its close signal
/// until the tab has been told to close.
struct OpenTab {
    connection: u64,
    owner: TabOwner,
    close: Option<CloseSender>,
}

/// An open channel's place in the hub: its connection id (a tab may
/// briefly have two while it reconnects) and the signal that closes it.
pub struct Admission {
    pub connection: u64,
    pub closing: oneshot::Receiver<Closing>,
}

/// The user has as many channels open here as `BATON_CHANNELS_PER_USER` allows.
#[derive(Debug)]
pub struct TooManyChannels;

/// One case's subscribers.
struct CaseFeed {
    /// What tabs not attached read: joining, or catching up.
    catching_up: broadcast::Sender<Arc<Frame>>,
    attached: Vec<Attached>,
}

impl CaseFeed {
    fn new() -> CaseFeed {
        CaseFeed {
            catching_up: broadcast::channel(CASE_BUFFER).0,
            attached: Vec::new(),
        }
    }

    fn is_unwatched(&self) -> bool {
        self.attached.is_empty() && self.catching_up.receiver_count() == 0
    }

    /// Sends `frame` to every tab of the case, in publication order (the
    /// hub's lock is held).
    fn send(&mut self, frame: Arc<Frame>) {
        // No receiver is no error: the tabs may all be attached.
        let _ = self.catching_up.send(frame.clone());
        let CaseFeed {
            catching_up,
            attached,
        } = self;
        attached.retain_mut(|tab| match push(&mut tab.session, &frame) {
            Push::Sent => true,
            // The connection is gone; its task is ending.
            Push::Closed => false,
            // Its queue is full (a slow reader): its own task takes over,
            // from this frame on, and waits for room as long as a tab may.
            Push::Full => {
                if let Some(fell_behind) = tab.fell_behind.take() {
                    let _ = fell_behind.send(CatchUp {
                        first: frame.clone(),
                        frames: catching_up.subscribe(),
                    });
                }
                false
            }
        });
    }
}

/// A tab past its welcome whose frames the publisher writes itself.
struct Attached {
    connection: u64,
    /// A handle on the tab's connection queue.
    session: Session,
    /// Tells the tab's task to take over when its queue is full.
    fell_behind: Option<oneshot::Sender<CatchUp>>,
}

/// A tab's frames, handed back to its own task: the frame that did not fit,
/// then every frame published after it.
pub struct CatchUp {
    pub first: Arc<Frame>,
    pub frames: broadcast::Receiver<Arc<Frame>>,
}

enum Push {
    Sent,
    Full,
    Closed,
}

/// Puts `frame` in the tab's connection queue if there is room now, never
/// waiting: the publisher serves every tab of the case in turn.
fn push(session: &mut Session, frame: &Frame) -> Push {
    // Unconstrained: the publisher may be a task (the PostgreSQL listener),
    // and tokio's co-operative budget would otherwise make the 129th push
    // of a poll look like a full queue.
    let send = tokio::task::unconstrained(session.text(frame.text.clone()));
    let mut send = std::pin::pin!(send);
    match send.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(Ok(())) => Push::Sent,
        Poll::Ready(Err(_)) => Push::Closed,
        Poll::Pending => Push::Full,
    }
}

#[derive(Default)]
pub struct Hub {
    cases: Mutex<HashMap<i64, CaseFeed>>,
    /// Open channels by user (a tab may briefly have two while it
    /// reconnects); a channel's sender is taken once it has been told to close.
    tabs: Mutex<HashMap<UserId, Vec<OpenTab>>>,
    /// Set once the instance is shutting down: new channels are refused.
    restarting: AtomicBool,
    /// The last connection id given.
    connections: AtomicU64,
}

impl Hub {
    /// The case's frames from now on, for a tab about to join: read by its
    /// task until [`Hub::attach`] takes it.
    pub fn subscribe(&self, case_id: CaseId) -> broadcast::Receiver<Arc<Frame>> {
        let mut cases = self.cases.lock().unwrap_or_else(|e| e.into_inner());
        cases
            .entry(case_id.get())
            .or_insert_with(CaseFeed::new)
            .catching_up
            .subscribe()
    }

    /// Attaches a tab that has read every frame of `frames` so far: from
    /// now on the publisher writes its frames into `session`'s queue, and
    /// the returned receiver hands them back if that queue is ever full.
    /// `Err(frames)` when a frame came in meanwhile: forward it first.
    pub fn attach(
        &self,
        case_id: CaseId,
        connection: u64,
        session: &Session,
        frames: broadcast::Receiver<Arc<Frame>>,
    ) -> Result<oneshot::Receiver<CatchUp>, broadcast::Receiver<Arc<Frame>>> {
        let mut cases = self.cases.lock().unwrap_or_else(|e| e.into_inner());
        // Under the lock nothing is published: an empty receiver means the
        // tab has every frame up to here, and the pushes start after it.
        if !frames.is_empty() {
            return Err(frames);
        }
        let (fell_behind, caught) = oneshot::channel();
        cases
            .entry(case_id.get())
            .or_insert_with(CaseFeed::new)
            .attached
            .push(Attached {
                connection,
                session: session.clone(),
                fell_behind: Some(fell_behind),
            });
        Ok(caught)
    }

    /// The tab's channel ended: no more frames for it.
    pub fn detach(&self, case_id: CaseId, connection: u64) {
        let mut cases = self.cases.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(feed) = cases.get_mut(&case_id.get()) {
            feed.attached.retain(|tab| tab.connection != connection);
            if feed.is_unwatched() {
                cases.remove(&case_id.get());
            }
        }
    }

    pub fn publish(&self, frame: Frame) {
        let case_id = frame.case_id;
        let mut cases = self.cases.lock().unwrap_or_else(|e| e.into_inner());
        let Some(feed) = cases.get_mut(&case_id) else {
            return;
        };
        feed.send(Arc::new(frame));
        if feed.is_unwatched() {
            // Nobody listens to this case any more.
            cases.remove(&case_id);
        }
    }

    /// Tells every tab of this process to reload (after events may have been lost).
    pub fn resync_all(&self, reason: &str) {
        let text: bytestring::ByteString = ServerFrame::Resync {
            missed: None,
            reason: Some(reason.to_owned()),
        }
        .text()
        .into();
        let mut cases = self.cases.lock().unwrap_or_else(|e| e.into_inner());
        for (case_id, feed) in cases.iter_mut() {
            feed.send(Arc::new(Frame {
                case_id: *case_id,
                text: text.clone(),
            }));
        }
    }

    /// Registers a channel about to open, unless its user has `limit`
    /// open here already. Registered before the tab's join reads who may
    /// stay, so a removal that commits after that read reaches it. Once the
    /// instance is shutting down the tab is told to restart at once.
    pub fn admit(&self, owner: TabOwner, limit: usize) -> Result<Admission, TooManyChannels> {
        let mut tabs = self.tabs.lock().unwrap_or_else(|e| e.into_inner());
        let open = tabs.entry(owner.user_id).or_default();
        if open.len() >= limit {
            return Err(TooManyChannels);
        }
        let connection = self.connections.fetch_add(1, Ordering::Relaxed) + 1;
        let (close, closing) = oneshot::channel();
        let close = if self.restarting.load(Ordering::SeqCst) {
            let _ = close.send(Closing::Restart);
            None
        } else {
            Some(close)
        };
        open.push(OpenTab {
            connection,
            owner,
            close,
        });
        metrics::gauge!("baton_open_tabs").increment(1);
        Ok(Admission {
            connection,
            closing,
        })
    }

    pub fn unregister_tab(&self, user_id: UserId, connection: u64) {
        let mut tabs = self.tabs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(list) = tabs.get_mut(&user_id) {
            let before = list.len();
            list.retain(|tab| tab.connection != connection);
            if list.len() < before {
                metrics::gauge!("baton_open_tabs").decrement(1);
            }
            if list.is_empty() {
                tabs.remove(&user_id);
            }
        }
    }

    /// Open channels in this process.
    pub fn open_tabs(&self) -> usize {
        let tabs = self.tabs.lock().unwrap_or_else(|e| e.into_inner());
        tabs.values().map(Vec::len).sum()
    }

    /// Tells every open channel here that `tabs` names to close, saying why.
    pub fn close(&self, tabs: &Tabs, reason: KickReason) {
        let mut open = self.tabs.lock().unwrap_or_else(|e| e.into_inner());
        let user = match tabs {
            Tabs::Session { user, .. } => *user,
            Tabs::OnCase { user, .. }
            | Tabs::OfUser { user, .. }
            | Tabs::OutsideCases { user, .. } => Some(*user),
            Tabs::Token { .. } => None,
        };
        let lists: Vec<&mut Vec<OpenTab>> = match user {
            Some(user) => open.get_mut(&UserId(user)).into_iter().collect(),
            // Rare (a logout, an admin's kick naming no user): look at all.
            None => open.values_mut().collect(),
        };
        for tab in lists.into_iter().flatten() {
            if tab.owner.is_one_of(tabs) {
                tell(&mut tab.close, Closing::Kicked(reason));
            }
        }
    }

    /// Shutting down: tells every open channel here to close with 1012, and
    /// any that opens from now on.
    pub fn restart_all(&self) {
        let mut tabs = self.tabs.lock().unwrap_or_else(|e| e.into_inner());
        self.restarting.store(true, Ordering::SeqCst);
        for tab in tabs.values_mut().flatten() {
            tell(&mut tab.close, Closing::Restart);
        }
    }

    /// Delivers one committed frame or kick to this process's subscribers.
    pub fn deliver(&self, outgoing: Outgoing) {
        match outgoing {
            Outgoing::Close { tabs, reason } => self.close(&tabs, reason),
            Outgoing::Frame(frame) => self.publish(frame),
        }
    }
}

/// Tells a tab to close, unless it has been told already (it is closing).
fn tell(close: &mut Option<CloseSender>, closing: Closing) {
    if let Some(close) = close.take() {
        let _ = close.send(closing);
    }
}

/// The single-process event bus for SQLite: delivers straight into the hub,
/// in commit order because SQLite's writes are serial.
pub struct LocalBus {
    pub hub: Arc<Hub>,
}

impl EventBus for LocalBus {
    /// Delivery is immediate here, so the fan-out delay is not measured.
    fn committed(&self, outgoing: Vec<Outgoing>) {
        for item in outgoing {
            self.hub.deliver(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(
        hub: &Hub,
        user: i64,
        session: &str,
        case: i64,
        token: i64,
    ) -> oneshot::Receiver<Closing> {
        let owner = TabOwner {
            user_id: UserId(user),
            session_id: session.into(),
            case_id: CaseId(case),
            token_id: token,
        };
        hub.admit(owner, 20).expect("room for the tab").closing
    }

    #[test]
    fn a_user_opens_at_most_the_limit_here() {
        let hub = Hub::default();
        let owner = |session: &str| TabOwner {
            user_id: UserId(1),
            session_id: session.into(),
            case_id: CaseId(10),
            token_id: 100,
        };
        let first = hub.admit(owner("a"), 2).expect("first");
        let _second = hub.admit(owner("b"), 2).expect("second");
        assert!(hub.admit(owner("c"), 2).is_err(), "a third is refused");
        let other = TabOwner {
            user_id: UserId(2),
            ..owner("d")
        };
        assert!(hub.admit(other, 2).is_ok(), "another user is not counted");
        hub.unregister_tab(UserId(1), first.connection);
        assert!(
            hub.admit(owner("c"), 2).is_ok(),
            "room again once one closed"
        );
    }

    fn told(closed: &mut oneshot::Receiver<Closing>) -> Option<Closing> {
        closed.try_recv().ok()
    }

    #[test]
    fn a_close_reaches_only_the_tabs_it_names() {
        let hub = Hub::default();
        // Alice's tab, and Bob's tab that reuses her session id.
        let mut alice = open(&hub, 1, "s", 10, 100);
        let mut bob = open(&hub, 2, "s", 10, 200);
        let mut bobs_other_case = open(&hub, 2, "t", 11, 201);
        hub.close(
            &Tabs::Session {
                session: "s".into(),
                user: Some(2),
            },
            KickReason::Kicked,
        );
        assert_eq!(told(&mut bob), Some(Closing::Kicked(KickReason::Kicked)));
        assert_eq!(told(&mut alice), None, "Alice's tab with the same id stays");

        hub.close(
            &Tabs::OnCase { user: 2, case: 11 },
            KickReason::AccessRemoved,
        );
        assert_eq!(
            told(&mut bobs_other_case),
            Some(Closing::Kicked(KickReason::AccessRemoved))
        );

        let mut kept = open(&hub, 1, "u", 10, 100);
        let mut other_token = open(&hub, 1, "v", 10, 101);
        hub.close(
            &Tabs::OfUser {
                user: 1,
                except_token: Some(100),
            },
            KickReason::SignedOut,
        );
        assert_eq!(
            told(&mut kept),
            None,
            "the token that changed the password stays"
        );
        assert_eq!(told(&mut alice), None);
        assert_eq!(
            told(&mut other_token),
            Some(Closing::Kicked(KickReason::SignedOut))
        );

        hub.close(&Tabs::Token { token: 100 }, KickReason::SignedOut);
        assert_eq!(
            told(&mut alice),
            Some(Closing::Kicked(KickReason::SignedOut))
        );
        assert_eq!(
            told(&mut kept),
            Some(Closing::Kicked(KickReason::SignedOut))
        );
    }
}
