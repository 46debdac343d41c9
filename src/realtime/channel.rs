//! One browser tab's edits channel: join (presence, welcome), then forward
//! the case's frames, ping every heartbeat, and leave (presence, grace for
//! its locks) when it closes, stops answering, or is kicked.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use actix_ws::{AggregatedMessage, CloseCode, CloseReason, MessageStream, Session};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::oneshot;

use super::hub::Closing;
use super::presence::online_users;
use super::Realtime;
use crate::auth::Actor;
use crate::clock;
use crate::db::Frame;
use crate::error::AppResult;
use crate::locks::engine::active_locks;
use crate::locks::lease;
use crate::locks::line::waiters_of_case;
use crate::locks::render::{lock_views, waiter_views};
use crate::models::presence::NewPresence;
use crate::models::{Case, CaseId, Lock, Presence, Waiter};
use crate::views::ServerFrame;

/// Largest frame a tab may send; the channel is server → client, so small.
const MAX_CLIENT_FRAME: usize = 64 * 1024;

static CONNECTIONS: AtomicU64 = AtomicU64::new(1);

/// Why a channel ended.
enum End {
    /// The tab closed it, or the connection broke.
    Closed,
    /// Two pings went unanswered.
    Unresponsive,
    /// An admin closed it.
    Kicked,
    /// This instance is shutting down; the tab should reconnect.
    Restart,
}

/// Serves one tab until its channel ends. Spawn with `actix_web::rt::spawn`:
/// the message stream is not `Send`.
pub async fn serve(
    rt: Realtime,
    actor: Actor,
    case: Case,
    mut session: Session,
    stream: MessageStream,
) {
    let Some(session_id) = actor.session_id.clone() else {
        let _ = session.close(None).await;
        return;
    };
    let connection = CONNECTIONS.fetch_add(1, Ordering::Relaxed);
    let (close_tx, close_rx) = oneshot::channel();
    rt.hub.register_tab(&session_id, connection, close_tx);
    // Subscribe before the welcome snapshot, so nothing falls between them.
    let frames = rt.hub.subscribe(case.id);

    let joined = join(&rt, &actor, &case, &session_id).await;
    // An open tab holds what it needs and no more: the user's and the
    // case's rows (strings and all) would sit in memory for every idle tab.
    let case_id = case.id;
    drop((actor, case));
    match joined {
        Ok((presence_id, welcome)) => {
            let end = if session.text(welcome).await.is_ok() {
                pump(&rt, &session_id, &mut session, stream, frames, close_rx).await
            } else {
                End::Closed
            };
            // Close first, record after: the tab's TCP connection ends as
            // soon as the close handshake is done, not after a database write.
            let _ = session.close(close_reason(&end)).await;
            if let Err(e) = leave(&rt, case_id, &session_id, presence_id, &end).await {
                tracing::warn!(error = %e, session_id, "could not record a tab leaving");
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, session_id, "could not record a tab joining");
            let _ = session.close(None).await;
        }
    }
    // Last: a shutdown waits for every tab to be unregistered, so the leave
    // above is on record before the process exits.
    rt.hub.unregister_tab(&session_id, connection);
}

/// The close frame a tab gets.
fn close_reason(end: &End) -> Option<CloseReason> {
    let (code, description) = match end {
        End::Closed => return None,
        End::Unresponsive => (CloseCode::Away, "no answer to two pings"),
        End::Kicked => (CloseCode::Policy, "kicked"),
        End::Restart => (CloseCode::Restart, "service restart"),
    };
    Some(CloseReason {
        code,
        description: Some(description.into()),
    })
}

/// Records the tab, gives a returning tab its locks back, tells the case, and
/// builds the welcome.
async fn join(
    rt: &Realtime,
    actor: &Actor,
    case: &Case,
    session_id: &str,
) -> AppResult<(i64, String)> {
    let (rt_, actor, case_id, session_id) =
        (rt.clone(), actor.clone(), case.id, session_id.to_owned());
    let joined = rt
        .db
        .write(Some(session_id.clone()), move |tx| {
            // The tab's lock rows first (the row-lock order of `crate::locks`):
            // a close of the same tab on an older connection takes them first
            // too, so the two are serialized.
            lease::reconnect(tx.conn, &session_id, actor.user.id, tx.now, rt_.policy.ttl)?;
            let presence = Presence::create(
                tx.conn,
                &NewPresence {
                    session_id: &session_id,
                    user_id: actor.user.id,
                    case_id,
                    instance_id: &rt_.instance_id,
                    user_agent: actor.user_agent.as_deref(),
                },
                tx.now,
            )?;
            let welcome = ServerFrame::Welcome {
                online_users: online_users(tx.conn, case_id, rt_.timing.presence_ttl())?,
                active_locks: lock_views(&active_locks(tx.conn, case_id, &rt_.policy)?),
                waiters: waiter_views(&waiters_of_case(tx.conn, case_id, tx.now)?),
                session_id,
            };
            Ok::<_, crate::error::AppError>((presence.id, welcome.text()))
        })
        .await?;
    rt.presence.changed(case_id);
    Ok(joined)
}

/// Forwards frames and pings until the channel ends.
async fn pump(
    rt: &Realtime,
    session_id: &str,
    session: &mut Session,
    stream: MessageStream,
    mut frames: broadcast::Receiver<Arc<Frame>>,
    mut closing: oneshot::Receiver<Closing>,
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
    loop {
        let sent = tokio::select! {
            message = stream.recv() => match message {
                Some(Ok(AggregatedMessage::Pong(_))) => {
                    last_pong = Instant::now();
                    rt.heartbeats.answered(session_id);
                    Ok(())
                }
                Some(Ok(AggregatedMessage::Ping(bytes))) => {
                    deliver(session.pong(&bytes), patience).await
                }
                // Tabs only listen; what they send is ignored.
                Some(Ok(AggregatedMessage::Text(_) | AggregatedMessage::Binary(_))) => Ok(()),
                Some(Ok(AggregatedMessage::Close(_))) | Some(Err(_)) | None => Err(End::Closed),
            },
            frame = frames.recv() => match frame {
                Ok(frame) => deliver(session.text(frame.text.clone()), patience).await,
                // Too slow to keep up: say so rather than skip silently; the
                // tab reloads the case and carries on from the newest frame.
                Err(RecvError::Lagged(missed)) => {
                    metrics::counter!("baton_frames_dropped_total").increment(missed);
                    let resync = ServerFrame::Resync { missed: Some(missed), reason: None }.text();
                    deliver(session.text(resync), patience).await
                }
                Err(RecvError::Closed) => Err(End::Closed),
            },
            _ = ticks.tick() => {
                if last_pong.elapsed() > period * 2 {
                    Err(End::Unresponsive)
                } else {
                    deliver(session.ping(b""), patience).await
                }
            }
            closing = &mut closing, if may_close => match closing {
                Ok(Closing::Kicked(reason)) => {
                    let kicked = ServerFrame::Kicked { reason }.text();
                    let _ = deliver(session.text(kicked), patience).await;
                    Err(End::Kicked)
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
    session_id: &str,
    presence_id: i64,
    end: &End,
) -> AppResult<()> {
    let (timing, session_id) = (rt.timing, session_id.to_owned());
    let kicked = matches!(end, End::Kicked);
    rt.db
        .write(Some(session_id.clone()), move |tx| {
            // The tab's lock and waiter rows first (the row-lock order of `crate::locks`),
            // and only then count its other connections: a reconnect that
            // commits meanwhile is counted rather than cut off.
            Lock::lock_rows_of_sessions(tx.conn, std::slice::from_ref(&session_id))?;
            Waiter::lock_rows_of_sessions(tx.conn, std::slice::from_ref(&session_id))?;
            let seen_since = clock::before(tx.now, timing.presence_ttl());
            let elsewhere =
                Presence::live_of_session(tx.conn, &session_id, Some(presence_id), seen_since)?;
            if !kicked && elsewhere == 0 {
                lease::disconnect(tx.conn, &session_id, tx.now, timing.disconnect_grace)?;
            }
            Presence::delete(tx.conn, presence_id)?;
            Ok::<_, crate::error::AppError>(())
        })
        .await?;
    rt.presence.changed(case_id);
    Ok(())
}
