//! A TCP proxy between baton and PostgreSQL that can misbehave on command,
//! for the fault tests (`tests/faults.rs`).
//!
//! It listens on 127.0.0.1 (a free port) and forwards every connection to
//! PostgreSQL, byte for byte, in both directions. Point baton at it with
//! [`FaultProxy::url`], which rewrites a database URL's host and port.
//! Faults, each until [`FaultProxy::heal`] or another fault:
//!
//! - [`FaultProxy::cut`]: every open connection is closed at once, in both
//!   directions (new ones are accepted and forwarded).
//! - [`FaultProxy::stall`]: bytes are held, unforwarded, in both
//!   directions; connections stay open. Healing forwards what was held.
//! - [`FaultProxy::latency`]: every chunk waits this long before it is
//!   forwarded (order kept).
//! - [`FaultProxy::refuse`]: new connections are accepted and closed at
//!   once; open ones carry on.
//!
//! Small on purpose: tokio only, one task per direction of each connection.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What the proxy does to traffic now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Normal,
    Stall,
    Latency(Duration),
    Refuse,
}

pub struct FaultProxy {
    pub addr: SocketAddr,
    mode: watch::Sender<Mode>,
    /// Bumped by [`FaultProxy::cut`]: every connection older than it ends.
    cuts: watch::Sender<u64>,
    /// Ends the proxy's thread (and every connection) when dropped.
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

/// Accepts connections and forwards each to `upstream`, obeying the mode.
async fn accept(
    listener: TcpListener,
    upstream: SocketAddr,
    mode: watch::Receiver<Mode>,
    cuts: watch::Receiver<u64>,
) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        if *mode.borrow() == Mode::Refuse {
            drop(client);
            continue;
        }
        let (mode, mut cuts) = (mode.clone(), cuts.clone());
        tokio::spawn(async move {
            let Ok(server) = TcpStream::connect(upstream).await else {
                return;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            cuts.borrow_and_update();
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            let up = pump(client_read, server_write, mode.clone());
            let down = pump(server_read, client_write, mode);
            // Either direction ending, or a cut, ends both: the halves are
            // dropped and both sockets close.
            tokio::select! {
                _ = up => {}
                _ = down => {}
                _ = cuts.changed() => {}
            }
        });
    }
}

impl FaultProxy {
    /// A proxy to `upstream` (`127.0.0.1:5432`), forwarding normally. It
    /// runs on a thread and runtime of its own, so that it keeps forwarding
    /// while a test's thread blocks (baton connects and migrates
    /// synchronously when it starts).
    pub fn start(upstream: SocketAddr) -> FaultProxy {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (mode, _) = watch::channel(Mode::Normal);
        let (cuts, _) = watch::channel(0u64);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (mode_rx, cuts_rx) = (mode.subscribe(), cuts.subscribe());
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("the proxy's runtime");
            runtime.block_on(async move {
                let listener = TcpListener::from_std(listener).expect("proxy listener");
                tokio::select! {
                    _ = accept(listener, upstream, mode_rx, cuts_rx) => {}
                    _ = stopped => {}
                }
            });
        });
        FaultProxy {
            addr,
            mode,
            cuts,
            stop: Some(stop),
        }
    }

    /// A proxy to the PostgreSQL that `url` names.
    pub fn to(url: &str) -> FaultProxy {
        use std::net::ToSocketAddrs;
        let (host, port) = host_port(url);
        let upstream = (host.as_str(), port)
            .to_socket_addrs()
            .expect("resolve PostgreSQL")
            .next()
            .expect("an address for PostgreSQL");
        FaultProxy::start(upstream)
    }

    /// `url` (`postgres://user@host:port/db?…`) with its host and port
    /// replaced by the proxy's.
    pub fn url(&self, url: &str) -> String {
        let (scheme, rest) = url.split_once("://").expect("a URL with a scheme");
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let userinfo = authority
            .rsplit_once('@')
            .map(|(u, _)| format!("{u}@"))
            .unwrap_or_default();
        format!("{scheme}://{userinfo}{}{path}", self.addr)
    }

    /// Closes every open connection now.
    pub fn cut(&self) {
        self.cuts.send_modify(|n| *n += 1);
    }

    /// Holds every byte, both ways, until healed.
    pub fn stall(&self) {
        self.mode.send_replace(Mode::Stall);
    }

    /// Delays every chunk by `delay`, both ways.
    pub fn latency(&self, delay: Duration) {
        self.mode.send_replace(Mode::Latency(delay));
    }

    /// Closes new connections as soon as they are accepted.
    pub fn refuse(&self) {
        self.mode.send_replace(Mode::Refuse);
    }

    /// Back to forwarding normally (held bytes go through).
    pub fn heal(&self) {
        self.mode.send_replace(Mode::Normal);
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.cut();
        self.stop.take();
    }
}

/// Copies `from` to `to` chunk by chunk, obeying the mode before each
/// chunk is written.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut mode: watch::Receiver<Mode>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        loop {
            let now = *mode.borrow_and_update();
            match now {
                Mode::Stall => {
                    if mode.changed().await.is_err() {
                        return;
                    }
                }
                Mode::Latency(delay) => {
                    tokio::time::sleep(delay).await;
                    break;
                }
                Mode::Normal | Mode::Refuse => break,
            }
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// The host and port of a `postgres://` URL (port 5432 if absent).
pub fn host_port(url: &str) -> (String, u16) {
    let rest = url.split_once("://").expect("a URL with a scheme").1;
    let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    match hostport.rsplit_once(':') {
        Some((host, port)) => (host.to_owned(), port.parse().expect("a port")),
        None => (hostport.to_owned(), 5432),
    }
}
