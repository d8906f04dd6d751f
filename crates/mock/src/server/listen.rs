//! The accept loop: it never stops on an accept error, caps open
//! connections, and makes room by closing idle ones: a newcomer at the cap
//! takes the slot of the oldest idle connection, and waits only when every
//! connection is answering a request.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio_rustls::TlsAcceptor;

use super::conn;
use super::state::ConnState;
use crate::config::Limits;
use crate::router::App;

/// Connections that may wait for room at once; more are dropped at once.
const WAITING: usize = 64;
/// How long a new connection waits for room before it is refused.
const WAIT_FOR_ROOM: Duration = Duration::from_millis(500);
/// File descriptors kept free for everything but connections.
const RESERVED_FDS: usize = 64;

/// A listening socket: address reuse, a deep backlog, non-blocking.
pub(super) fn bind(addr: &str) -> std::io::Result<std::net::TcpListener> {
    use std::net::ToSocketAddrs;
    let sock_addr = addr
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no address"))?;
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(sock_addr),
        socket2::Type::STREAM,
        None,
    )?;
    socket.set_reuse_address(true)?;
    socket.bind(&sock_addr.into())?;
    socket.listen(1024)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// The limits as served: the connection cap is kept below the process's
/// file limit (read from `/proc/self/limits` on Linux), so that the cap,
/// not the operating system, refuses the excess.
pub(super) fn effective_limits(mut limits: Limits) -> Limits {
    if let Some(files) = open_file_limit() {
        let room = files.saturating_sub(RESERVED_FDS + WAITING).max(1);
        limits.max_connections = limits.max_connections.min(room);
    }
    limits.max_connections = limits.max_connections.max(1);
    limits
}

/// The soft limit of open files, where the system tells it.
fn open_file_limit() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Every open connection, to find idle ones to close at the cap.
#[derive(Debug, Default)]
pub(super) struct Registry {
    next: AtomicU64,
    open: Mutex<BTreeMap<u64, Arc<ConnState>>>,
}

impl Registry {
    fn add(&self, state: Arc<ConnState>) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id, state);
        id
    }

    pub(super) fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<ConnState>>> {
        // Every write is one insert or remove: never left half done.
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Closes the oldest idle connection and hands its slot over.
    fn take_idle_slot(&self) -> Option<OwnedSemaphorePermit> {
        self.lock().values().find_map(|state| state.give_up_slot())
    }
}

/// Accepts until the server stops. An accept error (out of file
/// descriptors, say) concerns the moment, not the listener: back off and
/// go on listening.
pub(super) async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    limits: Limits,
    tls: Option<TlsAcceptor>,
    mut stopped: watch::Receiver<bool>,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let waiting = Arc::new(Semaphore::new(WAITING));
    let registry = Arc::new(Registry::default());
    let mut backoff = Duration::from_millis(5);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopped.changed() => return,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                backoff = Duration::from_millis(5);
                stream
            }
            Err(_) => {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let tls = tls.clone();
        let registry = registry.clone();
        // At the cap, the oldest idle connection makes room at once.
        let slot = slots
            .clone()
            .try_acquire_owned()
            .ok()
            .or_else(|| registry.take_idle_slot());
        if let Some(slot) = slot {
            tokio::spawn(connection(stream, app, limits, tls, registry, slot));
            continue;
        }
        // Every connection is answering a request: wait a little.
        let Ok(wait) = waiting.clone().try_acquire_owned() else {
            // A flood: nothing more can be spent on it.
            drop(stream);
            continue;
        };
        let slots = slots.clone();
        tokio::spawn(async move {
            let slot = tokio::time::timeout(WAIT_FOR_ROOM, slots.acquire_owned()).await;
            drop(wait);
            match slot {
                Ok(Ok(slot)) => connection(stream, app, limits, tls, registry, slot).await,
                _ => refuse(stream).await,
            }
        });
    }
}

/// Serves one connection in `slot`, registered while it lives.
async fn connection(
    stream: TcpStream,
    app: Arc<App>,
    limits: Limits,
    tls: Option<TlsAcceptor>,
    registry: Arc<Registry>,
    slot: OwnedSemaphorePermit,
) {
    let state = Arc::new(ConnState::new(
        limits.max_header_bytes,
        super::service::head_rewrite(&app),
    ));
    state.hold(slot);
    let id = registry.add(state.clone());
    conn::run(stream, app, limits, tls, state).await;
    registry.remove(id);
}

/// The answer to a connection there is no room for: 503 with
/// `Retry-After` and the envelope error body, then a clean close.
async fn refuse(mut stream: TcpStream) {
    let body = r#"{"api_version":"v1","error":{"code":"error.internal_server_error","message":"too many connections: retry later"}}"#;
    let date = jiff::fmt::rfc2822::DateTimePrinter::new()
        .timestamp_to_rfc9110_string(&jiff::Timestamp::now())
        .unwrap_or_default();
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\ndate: {date}\r\nretry-after: 1\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let answer = async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        stream.shutdown().await?;
        // Read what the client sent, so that closing does not reset the
        // connection before it reads the answer.
        let mut sink = [0u8; 4096];
        let mut left: usize = 64 * 1024;
        while left > 0 {
            let n = stream.read(&mut sink).await?;
            if n == 0 {
                break;
            }
            left = left.saturating_sub(n);
        }
        std::io::Result::Ok(())
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), answer).await;
}
