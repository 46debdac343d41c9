//! One browser tab's edits channel: join (presence, welcome), then forward
//! the case's frames, ping every heartbeat, and leave (presence, grace for
//! its locks) when it closes, stops answering, or is kicked.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_ws::{AggregatedMessage, CloseCode, CloseReason, MessageStream, Session};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::oneshot;

use super::hub::{Admission, CatchUp, Closing};
use super::presence::online_users;
use super::Realtime;
use crate::auth::access::rank_on;
use crate::auth::Actor;
use crate::clock;
use crate::db::{Frame, KickReason, Tx};
use crate::error::AppResult;
use crate::locks::engine::{lock_snapshot, tabs as lease};
use crate::locks::render::{lock_views, waiter_views};
use crate::models::presence::NewPresence;
use crate::models::{Case, CaseId, Lock, Presence, Role, Tab, User, Waiter};
use crate::views::{OnlineUserView, ServerFrame};

/// Largest frame a tab may send; the channel is server → client, so small.
const MAX_CLIENT_FRAME: usize = 64 * 1024;

/// Why a channel ended.
enum End {
    /// The tab closed it, or the connection broke.
    Closed,
    /// Two pings went unanswered.
    Unresponsive,
    /// It may not stay (an admin, its access or its token ended it).
    Kicked(KickReason),
    /// This instance is shutting down; the tab should reconnect.
    Restart,
}

/// Serves one tab until its channel ends. Spawn with `actix_web::rt::spawn`:
/// the message stream is not `Send`. The tab was admitted to the hub
/// (`Hub::admit`) before the upgrade; `token_expires_at` (Unix seconds) is
/// when its token ends, and the channel with it.
pub async fn serve(
    rt: Realtime,
    actor: Actor,
    case: Case,
    admission: Admission,
    token_expires_at: i64,
    mut session: Session,
    stream: MessageStream,
) {
    let Admission {
        connection,
        closing: close_rx,
    } = admission;
    let tab = Tab {
        user_id: actor.user.id,
        session_id: actor.session_id.clone().unwrap_or_default(),
    };
    // Subscribe before the welcome snapshot, so nothing falls between them.
    let frames = rt.hub.subscribe(case.id);

    let joined = join(&rt, &actor, &case, &tab).await;
    // An open tab holds what it needs and no more: the user's and the
    // case's rows (strings and all) would sit in memory for every idle tab.
    let case_id = case.id;
    drop((actor, case));
    match joined {
        Ok(Joined::Welcome(presence_id, welcome, _)) => {
            let end = if session.text(welcome).await.is_ok() {
                let token_ends = token_deadline(token_expires_at);
                let feed = Feed::Forwarding(frames);
                pump(
                    &rt,
                    &tab,
                    (case_id, connection),
                    &mut session,
                    stream,
                    feed,
                    close_rx,
                    token_ends,
                )
                .await
            } else {
                End::Closed
            };
            rt.hub.detach(case_id, connection);
            // Close first, record after: the tab's TCP connection ends as
            // soon as the close handshake is done, not after a database write.
            let _ = session.close(close_reason(&end)).await;
            if let Err(e) = leave(&rt, case_id, &tab, presence_id, &end).await {
                tracing::warn!(error = %e, session_id = tab.session_id, "could not record a tab leaving");
            }
        }
        Ok(Joined::Refused(reason)) => {
            let _ = session.text(ServerFrame::Kicked { reason }.text()).await;
            let _ = session.close(close_reason(&End::Kicked(reason))).await;
        }
        Err(e) => {
            tracing::warn!(error = %e, session_id = tab.session_id, "could not record a tab joining");
            let _ = session.close(None).await;
        }
    }
    // Last: a shutdown waits for every tab to be unregistered, so the leave
    // above is on record before the process exits.
    rt.hub.unregister_tab(tab.user_id, connection);
}

/// What a join came to: the tab is in (its presence row and the welcome),
/// or it may no longer be (its token or its membership ended after the
/// upgrade was allowed).
enum Joined {
    /// The presence row's id, the welcome's text, and the online users when
    /// they were read from the rows (this instance had no fresh count).
    Welcome(i64, String, Option<Vec<OnlineUserView>>),
    Refused(KickReason),
}

/// The close frame a tab gets.
fn close_reason(end: &End) -> Option<CloseReason> {
    let (code, description) = match end {
        End::Closed => return None,
        End::Unresponsive => (CloseCode::Away, "no answer to two pings"),
        End::Kicked(_) => (CloseCode::Policy, "kicked"),
        End::Restart => (CloseCode::Restart, "service restart"),
    };
    Some(CloseReason {
        code,
        description: Some(description.into()),
    })
}

/// Records the tab, gives a returning tab its locks back, tells the case, and
/// builds the welcome — unless, read again in this transaction, its token
/// or its access to the case has ended since the upgrade was allowed.
async fn join(rt: &Realtime, actor: &Actor, case: &Case, tab: &Tab) -> AppResult<Joined> {
    let (rt_, actor, case_id, tab_) = (rt.clone(), actor.clone(), case.id, tab.clone());
    let user = actor.user.to_ref();
    let heartbeat_ms = u64::try_from(rt.timing.heartbeat_interval.as_millis()).unwrap_or(u64::MAX);
    let joined = rt
        .db
        .write(Some(tab.editor()), move |tx| {
            let tab = tab_;
            if let Some(reason) = access_ended(tx, &actor, case_id)? {
                return Ok(Joined::Refused(reason));
            }
            // The tab's lock rows first (the row-lock order of `crate::locks`):
            // a close of the same tab on an older connection takes them first
            // too, so the two are serialized.
            lease::reconnect(tx.conn, &tab, tx.now, rt_.policy.ttl)?;
            let presence = Presence::create(
                tx.conn,
                &NewPresence {
                    session_id: &tab.session_id,
                    user_id: tab.user_id,
                    case_id,
                    instance_id: &rt_.instance_id,
                    user_agent: actor.user_agent.as_deref(),
                },
                tx.now,
            )?;
            // From this instance's count of the case, not a pass over its
            // rows: with the rows, each join of a big case would cost as much
            // as the tabs already in it.
            let presence_ttl = rt_.timing.presence_ttl();
            let user = actor.user.to_ref();
            let (online, read) = match rt_.presence.welcome_list(case_id, &user, presence_ttl) {
                Some(counted) => (counted, None),
                None => {
                    let read = online_users(tx.conn, case_id, presence_ttl)?;
                    (read.clone(), Some(read))
                }
            };
            let (locks, waiters) = lock_snapshot(tx.conn, case_id, &rt_.policy)?;
            let welcome = ServerFrame::Welcome {
                online_users: online,
                active_locks: lock_views(&locks),
                waiters: waiter_views(&waiters),
                heartbeat_ms,
                session_id: tab.session_id,
            };
            Ok::<_, crate::error::AppError>(Joined::Welcome(presence.id, welcome.text(), read))
        })
        .await?;
    if let Joined::Welcome(_, _, read) = &joined {
        match read {
            // The rows read in the join count its own tab already.
            Some(read) => rt.presence.counted(case_id, read),
            None => rt.presence.joined(case_id, &user),
        }
        rt.presence.changed(case_id);
    }
    Ok(joined)
}

/// Why the tab may not join after all, if it may not: its token ended, or
/// its user is no longer a reader of the case.
fn access_ended(tx: &mut Tx, actor: &Actor, case_id: CaseId) -> AppResult<Option<KickReason>> {
    let live = User::find_by_token(tx.conn, actor.user.id, actor.token_id, tx.now)?;
    let Some(user) = live else {
        return Ok(Some(KickReason::SignedOut));
    };
    let rank = rank_on(tx.conn, &user, case_id)?;
    Ok((!rank.is_some_and(|r| r.allows(Role::Reader))).then_some(KickReason::AccessRemoved))
}

/// When, on this process's monotonic clock, a token that ends at `exp`
/// (Unix seconds) has ended.
fn token_deadline(exp: i64) -> tokio::time::Instant {
    let left = exp.saturating_sub(chrono::Utc::now().timestamp()).max(0);
    tokio::time::Instant::now() + Duration::from_secs(left.unsigned_abs())
}

/// Where a tab's frames come from.
enum Feed {
    /// Its task reads them from the case's channel and writes them (before
    /// the tab is attached, and after its queue was full).
    Forwarding(broadcast::Receiver<Arc<Frame>>),
    /// The publisher writes them into the tab's queue; this says when the
    /// queue was full and the task must take over.
    Attached(oneshot::Receiver<CatchUp>),
    /// Between the two, for a moment.
    Switching,
}

/// What the tab's task hears from its feed.
enum Fed {
    Frame(Result<Arc<Frame>, RecvError>),
    FellBehind(Result<CatchUp, oneshot::error::RecvError>),
}

impl Feed {
    async fn next(&mut self) -> Fed {
        match self {
            Feed::Forwarding(frames) => Fed::Frame(frames.recv().await),
            Feed::Attached(fell_behind) => Fed::FellBehind(fell_behind.await),
            Feed::Switching => std::future::pending().await,
        }
    }

    /// Once a forwarding tab has caught up, hands its frames to the
    /// publisher.
    fn attach(&mut self, rt: &Realtime, (case_id, connection): (CaseId, u64), session: &Session) {
        if let Feed::Forwarding(frames) = self {
            if frames.is_empty() {
                let Feed::Forwarding(frames) = std::mem::replace(self, Feed::Switching) else {
                    return;
                };
                *self = match rt.hub.attach(case_id, connection, session, frames) {
                    Ok(fell_behind) => Feed::Attached(fell_behind),
                    Err(frames) => Feed::Forwarding(frames),
                };
            }
        }
    }
}

/// Forwards frames and pings until the channel ends, or its token does.
#[allow(clippy::too_many_arguments)]
async fn pump(
    rt: &Realtime,
    tab: &Tab,
    at: (CaseId, u64),
    session: &mut Session,
    stream: MessageStream,
    mut feed: Feed,
    mut closing: oneshot::Receiver<Closing>,
    token_ends: tokio::time::Instant,
) -> End {
    let mut stream = stream
        .max_frame_size(MAX_CLIENT_FRAME)
        .aggregate_continuations()
        .max_continuation_size(MAX_CLIENT_FRAME);
    let period = rt.timing.heartbeat_interval;
    // As long as two missed pongs: how long one send to the tab may take.
    let patience = period * 2;
    // The first ping waits a full period: it must not race the client's first frame.
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    let mut last_pong = Instant::now();
    // A oneshot must not be polled again once it has answered.
    let mut may_close = true;
    let token_ended = tokio::time::sleep_until(token_ends);
    tokio::pin!(token_ended);
    loop {
        feed.attach(rt, at, session);
        let sent = tokio::select! {
            message = stream.recv() => {
                from_tab(message, rt, tab, session, &mut last_pong, patience).await
            }
            fed = feed.next() => to_tab(fed, session, &mut feed, patience).await,
            _ = ticks.tick() => {
                if last_pong.elapsed() > period * 2 {
                    Err(End::Unresponsive)
                } else {
                    deliver(session.ping(b""), patience).await
                }
            }
            // The token ran out: the tab is signed out, as when its token
            // is revoked.
            () = &mut token_ended => {
                let kicked = ServerFrame::Kicked { reason: KickReason::SignedOut }.text();
                let _ = deliver(session.text(kicked), patience).await;
                Err(End::Kicked(KickReason::SignedOut))
            }
            closing = &mut closing, if may_close => match closing {
                Ok(Closing::Kicked(reason)) => {
                    let kicked = ServerFrame::Kicked { reason }.text();
                    let _ = deliver(session.text(kicked), patience).await;
                    Err(End::Kicked(reason))
                }
                Ok(Closing::Restart) => Err(End::Restart),
                // The hub let go of the sender without a word: no close can
                // come any more.
                Err(_) => {
                    may_close = false;
                    Ok(())
                }
            },
        };
        if let Err(end) = sent {
            return end;
        }
    }
}

/// What the tab sent: a pong or the tab's own ping renews its locks
/// (`Heartbeats::answered`), a ping is answered; anything else a tab sends
/// is ignored (tabs only listen).
async fn from_tab(
    message: Option<Result<AggregatedMessage, actix_ws::ProtocolError>>,
    rt: &Realtime,
    tab: &Tab,
    session: &mut Session,
    last_pong: &mut Instant,
    patience: Duration,
) -> Result<(), End> {
    match message {
        Some(Ok(AggregatedMessage::Pong(_))) => {
            *last_pong = Instant::now();
            rt.heartbeats.answered(tab);
            Ok(())
        }
        Some(Ok(AggregatedMessage::Ping(bytes))) => deliver(session.pong(&bytes), patience).await,
        // A browser cannot see WebSocket pings, so a tab sends its own:
        // answered, and it renews the tab's locks as a pong does.
        Some(Ok(AggregatedMessage::Text(text))) if is_ping(&text) => {
            *last_pong = Instant::now();
            rt.heartbeats.answered(tab);
            deliver(session.text(ServerFrame::Pong.text()), patience).await
        }
        Some(Ok(AggregatedMessage::Text(_) | AggregatedMessage::Binary(_))) => Ok(()),
        Some(Ok(AggregatedMessage::Close(_))) | Some(Err(_)) | None => Err(End::Closed),
    }
}

/// A frame of the case for the tab, written within `patience`.
async fn to_tab(
    fed: Fed,
    session: &mut Session,
    feed: &mut Feed,
    patience: Duration,
) -> Result<(), End> {
    match fed {
        Fed::Frame(Ok(frame)) => deliver(session.text(frame.text.clone()), patience).await,
        // Too slow to keep up: say so rather than skip silently; the tab
        // reloads the case and carries on from the newest frame.
        Fed::Frame(Err(RecvError::Lagged(missed))) => {
            metrics::counter!("baton_frames_dropped_total").increment(missed);
            let resync = ServerFrame::Resync {
                missed: Some(missed),
                reason: None,
            }
            .text();
            deliver(session.text(resync), patience).await
        }
        Fed::Frame(Err(RecvError::Closed)) => Err(End::Closed),
        // The tab's queue was full: write the frame that did not fit,
        // waiting for room as long as a tab may, then forward the rest
        // until caught up.
        Fed::FellBehind(Ok(CatchUp { first, frames })) => {
            *feed = Feed::Forwarding(frames);
            deliver(session.text(first.text.clone()), patience).await
        }
        // Let go without a word: its connection is gone.
        Fed::FellBehind(Err(_)) => Err(End::Closed),
    }
}

/// `{"type": "ping"}`, the tab's heartbeat.
fn is_ping(text: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Frame<'a> {
        #[serde(rename = "type", borrow)]
        kind: std::borrow::Cow<'a, str>,
    }
    serde_json::from_str::<Frame>(text).is_ok_and(|f| f.kind == "ping")
}

/// Awaits one send to the tab. A tab that does not take a frame within two
/// heartbeats (a suspended laptop with its connection still open) is treated
/// as gone, so it cannot hold up its own pings and lease.
async fn deliver(
    send: impl std::future::Future<Output = Result<(), actix_ws::Closed>>,
    limit: std::time::Duration,
) -> Result<(), End> {
    match tokio::time::timeout(limit, send).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err(End::Closed),
        Err(_) => Err(End::Unresponsive),
    }
}

/// Removes the tab, starts the grace period of its locks (unless the same
/// tab is still connected elsewhere, or was kicked and has none), and tells
/// the case.
async fn leave(
    rt: &Realtime,
    case_id: CaseId,
    tab: &Tab,
    presence_id: i64,
    end: &End,
) -> AppResult<()> {
    let (timing, tab, user_id) = (rt.timing, tab.clone(), tab.user_id);
    // A tab kicked by an admin or for lost access has no locks left to keep;
    // one signed out keeps the grace, and gets them back if it signs in and
    // reconnects in time.
    let keeps_grace = !matches!(
        end,
        End::Kicked(KickReason::Kicked | KickReason::AccessRemoved)
    );
    rt.db
        .write(Some(tab.editor()), move |tx| {
            // The tab's lock and waiter rows first (the row-lock order of `crate::locks`),
            // and only then count its other connections: a reconnect that
            // commits meanwhile is counted rather than cut off.
            let tabs = std::slice::from_ref(&tab);
            Lock::lock_rows_of_tabs(tx.conn, tabs)?;
            Waiter::lock_rows_of_tabs(tx.conn, tabs)?;
            let seen_since = clock::before(tx.now, timing.presence_ttl());
            let elsewhere = Presence::live_of_tab(tx.conn, &tab, Some(presence_id), seen_since)?;
            if keeps_grace && elsewhere == 0 {
                lease::disconnect(tx.conn, &tab, tx.now, timing.disconnect_grace)?;
            }
            Presence::delete(tx.conn, presence_id)?;
            Ok::<_, crate::error::AppError>(())
        })
        .await?;
    rt.presence.left(case_id, user_id);
    rt.presence.changed(case_id);
    Ok(())
}
