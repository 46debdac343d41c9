//! An edits channel as a test hears it: every JSON frame, and how the
//! server closed it (the close code), answering pings as it reads.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

use super::{TestApp, TestUser};

/// What a tab heard: a JSON frame, or the end of the connection with the
/// server's close code (`None` when it ended without a close frame).
#[derive(Debug)]
pub enum Heard {
    Frame(Value),
    Closed(Option<u16>),
}

/// An edits channel read continuously (pings are answered), reporting its
/// frames and the close code the server sent.
pub struct Channel {
    heard: tokio::sync::mpsc::UnboundedReceiver<Heard>,
    close: Option<tokio::sync::oneshot::Sender<()>>,
}

/// Opens `user`'s channel on `slug` at `base` and returns it with its welcome.
pub async fn channel_at(
    app: &TestApp,
    base: &str,
    slug: &str,
    user: &TestUser,
) -> (Channel, Value) {
    let socket = app.raw_socket_at(base, slug, user).await;
    let (heard_tx, heard) = tokio::sync::mpsc::unbounded_channel();
    let (close_tx, mut close_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let mut socket = socket;
        loop {
            tokio::select! {
                _ = &mut close_rx => {
                    let _ = socket.close(None).await;
                    while let Some(Ok(_)) = socket.next().await {}
                    return;
                }
                message = socket.next() => match message {
                    Some(Ok(Message::Text(text))) => {
                        let frame = serde_json::from_str(text.as_str()).expect("a JSON frame");
                        let _ = heard_tx.send(Heard::Frame(frame));
                    }
                    Some(Ok(Message::Close(frame))) => {
                        let _ = heard_tx.send(Heard::Closed(frame.map(|f| u16::from(f.code))));
                        // Let the library answer the close, then stop.
                        while let Some(Ok(_)) = socket.next().await {}
                        return;
                    }
                    None | Some(Err(_)) => {
                        let _ = heard_tx.send(Heard::Closed(None));
                        return;
                    }
                    Some(Ok(_)) => {} // pings are answered by the library while reading
                }
            }
        }
    });
    let mut channel = Channel {
        heard,
        close: Some(close_tx),
    };
    let welcome = channel.next_where("the welcome", |_| true).await;
    assert_eq!(welcome["type"], "welcome", "first frame: {welcome}");
    (channel, welcome)
}

pub async fn channel(app: &TestApp, slug: &str, user: &TestUser) -> (Channel, Value) {
    channel_at(app, &app.base, slug, user).await
}

pub const WAIT: Duration = Duration::from_secs(10);

impl Channel {
    /// The next frame that matches (10 s at most), skipping others; panics
    /// if the channel ends first.
    pub async fn next_where(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            match tokio::time::timeout_at(deadline, self.heard.recv()).await {
                Err(_) => panic!("no {what} within {WAIT:?}"),
                Ok(None) => panic!("the channel ended before {what}"),
                Ok(Some(Heard::Closed(code))) => {
                    panic!("the channel was closed (code {code:?}) before {what}")
                }
                Ok(Some(Heard::Frame(frame))) if matches(&frame) => return frame,
                Ok(Some(Heard::Frame(_))) => {}
            }
        }
    }

    /// Every frame up to the first that matches (10 s at most); panics if
    /// the channel ends first.
    pub async fn frames_until(
        &mut self,
        what: &str,
        matches: impl Fn(&Value) -> bool,
    ) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + WAIT;
        let mut seen = Vec::new();
        loop {
            match tokio::time::timeout_at(deadline, self.heard.recv()).await {
                Err(_) => panic!("no {what} within {WAIT:?}; heard {seen:?}"),
                Ok(None) => panic!("the channel ended before {what}; heard {seen:?}"),
                Ok(Some(Heard::Closed(code))) => {
                    panic!("the channel was closed (code {code:?}) before {what}; heard {seen:?}")
                }
                Ok(Some(Heard::Frame(frame))) => {
                    let done = matches(&frame);
                    seen.push(frame);
                    if done {
                        return seen;
                    }
                }
            }
        }
    }

    /// Waits (10 s at most) for the server to close the channel: the frames
    /// heard before, and the close code.
    pub async fn closed_by_server(&mut self, what: &str) -> (Vec<Value>, Option<u16>) {
        let deadline = tokio::time::Instant::now() + WAIT;
        let mut seen = Vec::new();
        loop {
            match tokio::time::timeout_at(deadline, self.heard.recv()).await {
                Err(_) => {
                    panic!("{what}: the channel was not closed within {WAIT:?}; heard {seen:?}")
                }
                Ok(None) => return (seen, None),
                Ok(Some(Heard::Closed(code))) => return (seen, code),
                Ok(Some(Heard::Frame(frame))) => seen.push(frame),
            }
        }
    }

    /// Closes the tab as a browser does (a close frame).
    pub fn close(mut self) {
        if let Some(close) = self.close.take() {
            let _ = close.send(());
        }
    }
}

/// Asserts the channel is told `kicked` with `reason` and closed with 1008.
pub async fn assert_kicked(channel: &mut Channel, reason: &str) {
    let (heard, code) = channel.closed_by_server(reason).await;
    let kicked: Vec<&Value> = heard.iter().filter(|f| f["type"] == "kicked").collect();
    assert_eq!(
        kicked.len(),
        1,
        "one kicked frame before the close; heard {heard:?}"
    );
    assert_eq!(kicked[0]["reason"], reason, "heard {heard:?}");
    assert_eq!(code, Some(1008), "close code; heard {heard:?}");
}
