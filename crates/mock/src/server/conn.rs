//! One connection: the request framing check, activity and timeouts, TLS,
//! and the reset that chaos asks for.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{Notify, OwnedSemaphorePermit};
use tokio_rustls::TlsAcceptor;

use super::Error;
use crate::config::{Limits, TlsIdentity};
use crate::router::App;

/// A TLS acceptor for `identity` (rustls with ring).
pub(super) fn acceptor(identity: &TlsIdentity) -> Result<TlsAcceptor, Error> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&identity.cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| Error::Tls(format!("the certificate PEM: {e}")))?;
    if certs.is_empty() {
        return Err(Error::Tls(
            "the certificate PEM holds no certificate".into(),
        ));
    }
    let key = PrivateKeyDer::from_pem_slice(&identity.key_pem)
        .map_err(|e| Error::Tls(format!("the key PEM: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| Error::Tls(format!("the certificate and key: {e}")))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// How one request's body is framed, as its head says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Framing {
    /// `Content-Length`, or no body.
    Plain,
    /// `Transfer-Encoding`: the connection is closed after the answer,
    /// since the next request's start is not tracked through chunks.
    Chunked,
    /// Both `Content-Length` and `Transfer-Encoding`: which one frames the
    /// body is ambiguous (request smuggling), so the request is refused.
    Ambiguous,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Head,
    Body(u64),
    /// After a chunked body or an oversized head: no longer followed.
    Untracked,
}

/// Follows the request heads of a connection as their bytes arrive, to
/// tell how each body is framed (the HTTP layer quietly prefers
/// `Transfer-Encoding` over `Content-Length`) and when a head started.
///
/// It also percent-encodes the bytes of a request target that the HTTP
/// layer would refuse with a bare 400 (`"`, `<`, `>`, DEL and non-ASCII
/// bytes, which curl sends as typed), so that such a request gets the
/// API's answer, in its documented shape, like any other value.
#[derive(Debug)]
struct Scanner {
    phase: Phase,
    head: Vec<u8>,
    head_started: Option<Instant>,
    verdicts: VecDeque<Framing>,
    max_head: usize,
    /// Spaces seen in the current request line (1: in the target), and
    /// whether the line has ended.
    line_spaces: u8,
    line_done: bool,
}

/// True for a byte of a request target to percent-encode (see [`Scanner`]).
fn needs_encoding(b: u8) -> bool {
    matches!(b, b'"' | b'<' | b'>') || b >= 0x7f
}

impl Scanner {
    fn new(max_head: usize) -> Self {
        Self {
            phase: Phase::Head,
            head: Vec::new(),
            head_started: None,
            verdicts: VecDeque::new(),
            max_head,
            line_spaces: 0,
            line_done: false,
        }
    }

    /// Follows `bytes` and writes them to `out`, the request target's
    /// unsafe bytes percent-encoded.
    fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<u8>) {
        while !bytes.is_empty() {
            match self.phase {
                Phase::Untracked => {
                    out.extend_from_slice(bytes);
                    return;
                }
                Phase::Body(left) => {
                    let take = usize::try_from(left).unwrap_or(usize::MAX).min(bytes.len());
                    out.extend_from_slice(&bytes[..take]);
                    bytes = &bytes[take..];
                    let left = left - take as u64;
                    self.phase = if left == 0 {
                        Phase::Head
                    } else {
                        Phase::Body(left)
                    };
                }
                Phase::Head => {
                    let b = bytes[0];
                    bytes = &bytes[1..];
                    // Empty lines before a request are allowed (RFC 9112 2.2).
                    if self.head.is_empty() && matches!(b, b'\r' | b'\n') {
                        out.push(b);
                        continue;
                    }
                    if self.head.is_empty() {
                        self.head_started = Some(Instant::now());
                    }
                    match b {
                        b'\n' => self.line_done = true,
                        b' ' if !self.line_done => {
                            self.line_spaces = self.line_spaces.saturating_add(1)
                        }
                        _ => {}
                    }
                    let in_target = !self.line_done && self.line_spaces == 1;
                    if in_target && needs_encoding(b) {
                        let encoded = format!("%{b:02X}");
                        out.extend_from_slice(encoded.as_bytes());
                        self.head.extend_from_slice(encoded.as_bytes());
                    } else {
                        out.push(b);
                        self.head.push(b);
                    }
                    if self.head.ends_with(b"\r\n\r\n") || self.head.ends_with(b"\n\n") {
                        self.end_of_head();
                    } else if self.head.len() > self.max_head {
                        // The HTTP layer refuses it; nothing more to follow.
                        self.phase = Phase::Untracked;
                    }
                }
            }
        }
    }

    fn end_of_head(&mut self) {
        let head = String::from_utf8_lossy(&self.head);
        let (mut length, mut chunked, mut lengths) = (None, false, 0);
        for line in head.lines().skip(1) {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let name = name.trim();
            if name.eq_ignore_ascii_case("content-length") {
                lengths += 1;
                length = value.trim().parse::<u64>().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = true;
            }
        }
        let (verdict, phase) = match (chunked, lengths) {
            (true, 0) => (Framing::Chunked, Phase::Untracked),
            (true, _) => (Framing::Ambiguous, Phase::Untracked),
            (false, 0) => (Framing::Plain, Phase::Head),
            (false, _) => match length {
                Some(0) => (Framing::Plain, Phase::Head),
                Some(n) => (Framing::Plain, Phase::Body(n)),
                // An unreadable length is the HTTP layer's 400.
                None => (Framing::Plain, Phase::Untracked),
            },
        };
        self.verdicts.push_back(verdict);
        self.phase = phase;
        self.head.clear();
        self.head_started = None;
        self.line_spaces = 0;
        self.line_done = false;
    }
}

/// What the server knows of one connection.
#[derive(Debug)]
pub(crate) struct ConnState {
    scanner: Mutex<Scanner>,
    in_flight: AtomicUsize,
    /// Milliseconds since `born` when a request began (`u64::MAX`: none).
    busy_since: AtomicU64,
    born: Instant,
    closing: AtomicBool,
    close: Notify,
    reset: AtomicBool,
    /// The connection's slot under the cap; an idle connection's slot can
    /// be taken by a newcomer (the idle one is then closed).
    slot: Mutex<Option<OwnedSemaphorePermit>>,
}

impl ConnState {
    pub(super) fn new(max_head: usize) -> Self {
        Self {
            scanner: Mutex::new(Scanner::new(max_head)),
            in_flight: AtomicUsize::new(0),
            busy_since: AtomicU64::new(u64::MAX),
            born: Instant::now(),
            closing: AtomicBool::new(false),
            close: Notify::new(),
            reset: AtomicBool::new(false),
            slot: Mutex::new(None),
        }
    }

    /// Holds `slot` for the connection's life.
    pub(super) fn hold(&self, slot: OwnedSemaphorePermit) {
        *self
            .slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(slot);
    }

    /// Closes the connection, if idle, and gives its slot away.
    pub(super) fn give_up_slot(&self) -> Option<OwnedSemaphorePermit> {
        if !self.is_idle() || self.closing.load(Ordering::SeqCst) {
            return None;
        }
        let slot = self
            .slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()?;
        self.ask_to_close();
        Some(slot)
    }

    fn scanner(&self) -> std::sync::MutexGuard<'_, Scanner> {
        // The scanner is only ever fed whole slices: never left half done.
        self.scanner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// No request is being answered (it may be sending a head).
    pub(super) fn is_idle(&self) -> bool {
        self.in_flight.load(Ordering::SeqCst) == 0
    }

    /// Asks the connection to close; false if it already was asked.
    pub(super) fn ask_to_close(&self) -> bool {
        if self.closing.swap(true, Ordering::SeqCst) {
            return false;
        }
        self.close.notify_one();
        true
    }

    /// The framing of the next request, in order.
    pub(super) fn next_framing(&self) -> Framing {
        self.scanner()
            .verdicts
            .pop_front()
            .unwrap_or(Framing::Plain)
    }

    /// Marks a request as being answered until the guard drops (with the
    /// response body).
    pub(super) fn begin(self: &Arc<Self>) -> Busy {
        if self.in_flight.fetch_add(1, Ordering::SeqCst) == 0 {
            let now = self.born.elapsed().as_millis() as u64;
            self.busy_since.store(now, Ordering::SeqCst);
        }
        Busy(self.clone())
    }

    /// The connection ends with a TCP reset instead of a clean close.
    pub(super) fn reset_on_close(&self) {
        self.reset.store(true, Ordering::SeqCst);
    }

    fn head_started(&self) -> Option<Instant> {
        self.scanner().head_started
    }

    fn busy_for(&self) -> Option<Duration> {
        let since = self.busy_since.load(Ordering::SeqCst);
        (since != u64::MAX).then(|| {
            self.born
                .elapsed()
                .saturating_sub(Duration::from_millis(since))
        })
    }
}

/// A request being answered; dropped when its response body is.
#[derive(Debug)]
pub(crate) struct Busy(Arc<ConnState>);

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.busy_since.store(u64::MAX, Ordering::SeqCst);
        }
    }
}

/// The TCP socket under a stream, for the reset.
trait Socket {
    fn socket(&self) -> &TcpStream;
}

impl Socket for TcpStream {
    fn socket(&self) -> &TcpStream {
        self
    }
}

impl Socket for tokio_rustls::server::TlsStream<TcpStream> {
    fn socket(&self) -> &TcpStream {
        self.get_ref().0
    }
}

/// How long, and how much, a closing connection reads and discards.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 4 * 1024 * 1024;

/// The connection's byte stream (decrypted, with TLS), watched: every
/// byte read goes through the scanner on its way to the HTTP layer.
struct Watched<S: Socket> {
    inner: S,
    state: Arc<ConnState>,
    /// While closing: the end of the lingering, and the bytes discarded.
    linger: Option<Pin<Box<tokio::time::Sleep>>>,
    discarded: usize,
    /// Bytes read from the socket, before the scanner.
    raw: Vec<u8>,
    /// Scanned bytes the HTTP layer has not taken yet, from `pending_at`.
    pending: Vec<u8>,
    pending_at: usize,
}

impl<S: Socket + AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.pending_at < this.pending.len() {
            let n = buf.remaining().min(this.pending.len() - this.pending_at);
            buf.put_slice(&this.pending[this.pending_at..this.pending_at + n]);
            this.pending_at += n;
            return Poll::Ready(Ok(()));
        }
        this.raw.resize(buf.remaining().clamp(1, 64 * 1024), 0);
        let mut raw = ReadBuf::new(&mut this.raw);
        std::task::ready!(Pin::new(&mut this.inner).poll_read(cx, &mut raw))?;
        let read = raw.filled().len();
        if read == 0 {
            return Poll::Ready(Ok(()));
        }
        this.pending.clear();
        this.pending_at = 0;
        this.state
            .scanner()
            .feed(&this.raw[..read], &mut this.pending);
        let n = buf.remaining().min(this.pending.len());
        buf.put_slice(&this.pending[..n]);
        this.pending_at = n;
        Poll::Ready(Ok(()))
    }
}

impl<S: Socket + AsyncRead + AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    /// A lingering close: after the answer and the FIN, what the client
    /// still sends (a body refused unread) is read and discarded for a
    /// while, so that closing does not reset the connection before the
    /// client has read the answer.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.state.reset.load(Ordering::SeqCst) {
            // A reset must not be turned into a clean close.
            return Poll::Ready(Ok(()));
        }
        if self.linger.is_none() {
            std::task::ready!(Pin::new(&mut self.inner).poll_shutdown(cx))?;
            self.linger = Some(Box::pin(tokio::time::sleep(LINGER)));
        }
        let mut scratch = [0u8; 8192];
        loop {
            let expired = self
                .linger
                .as_mut()
                .is_some_and(|deadline| deadline.as_mut().poll(cx).is_ready());
            if expired || self.discarded > LINGER_BYTES {
                return Poll::Ready(Ok(()));
            }
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut self.inner).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => self.discarded += buf.filled().len(),
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

impl<S: Socket> Drop for Watched<S> {
    fn drop(&mut self) {
        if self.state.reset.load(Ordering::SeqCst) {
            // SO_LINGER 0: closing sends RST, not FIN.
            let _ = socket2::SockRef::from(self.inner.socket()).set_linger(Some(Duration::ZERO));
        }
    }
}

/// Serves one connection until it ends, is asked to close, or breaks a
/// timeout.
pub(super) async fn run(
    stream: TcpStream,
    app: Arc<App>,
    limits: Limits,
    tls: Option<TlsAcceptor>,
    state: Arc<ConnState>,
) {
    match tls {
        None => serve(stream, app, limits, state).await,
        Some(acceptor) => {
            let handshake =
                tokio::time::timeout(limits.header_read_timeout, acceptor.accept(stream));
            if let Ok(Ok(stream)) = handshake.await {
                serve(stream, app, limits, state).await;
            }
        }
    }
}

async fn serve<S>(stream: S, app: Arc<App>, limits: Limits, state: Arc<ConnState>)
where
    S: Socket + AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let io = TokioIo::new(Watched {
        inner: stream,
        state: state.clone(),
        linger: None,
        discarded: 0,
        raw: Vec::new(),
        pending: Vec::new(),
        pending_at: 0,
    });
    let service = {
        let state = state.clone();
        hyper::service::service_fn(move |request| {
            super::service::answer(request, app.clone(), state.clone(), limits)
        })
    };
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        // Runs while hyper waits for a head: it bounds idle keep-alive too.
        .header_read_timeout(limits.idle_timeout)
        .max_buf_size(limits.max_header_bytes.max(8192))
        .max_headers(limits.max_headers);
    let connection = builder.serve_connection(io, service);
    tokio::select! {
        _ = connection => {}
        _ = state.close.notified() => {}
        _ = watchdog(&state, &limits) => {}
    }
}

/// Ends when a request head takes longer than its timeout from its first
/// byte, or an answer takes longer than its timeout to be written.
async fn watchdog(state: &ConnState, limits: &Limits) {
    let every = (limits.header_read_timeout / 4)
        .min(Duration::from_millis(500))
        .max(Duration::from_millis(10));
    loop {
        tokio::time::sleep(every).await;
        if state
            .head_started()
            .is_some_and(|t| t.elapsed() > limits.header_read_timeout)
        {
            return;
        }
        if state
            .busy_for()
            .is_some_and(|d| d > limits.response_timeout)
        {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(chunks: &[&[u8]]) -> (Vec<Framing>, Phase) {
        let mut s = Scanner::new(1024);
        let mut out = Vec::new();
        for c in chunks {
            s.feed(c, &mut out);
        }
        assert_eq!(
            out,
            chunks.concat(),
            "nothing to encode: bytes pass unchanged"
        );
        (s.verdicts.into_iter().collect(), s.phase)
    }

    #[test]
    fn heads_are_followed_across_reads_and_bodies() {
        let (v, phase) = verdicts(&[
            b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 5\r\n",
            b"\r\nhel",
            b"loGET /c HTTP/1.1\r\n\r\n",
        ]);
        assert_eq!(v, [Framing::Plain, Framing::Plain, Framing::Plain]);
        assert_eq!(phase, Phase::Head);
    }

    #[test]
    fn both_lengths_are_ambiguous_and_chunked_stops_following() {
        let (v, phase) = verdicts(&[
            b"POST / HTTP/1.1\r\ncontent-length: 4\r\nTransfer-Encoding: chunked\r\n\r\n",
        ]);
        assert_eq!(v, [Framing::Ambiguous]);
        assert_eq!(phase, Phase::Untracked);
        let (v, _) = verdicts(&[b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"]);
        assert_eq!(v, [Framing::Chunked]);
    }

    #[test]
    fn a_head_start_is_timed_and_oversized_heads_are_left_to_hyper() {
        let mut s = Scanner::new(16);
        let mut out = Vec::new();
        s.feed(b"\r\nGET /", &mut out);
        assert!(s.head_started.is_some());
        s.feed(&[b'x'; 64], &mut out);
        assert_eq!(s.phase, Phase::Untracked);
    }

    #[test]
    fn unsafe_target_bytes_are_encoded_and_nothing_else() {
        let mut s = Scanner::new(1024);
        let mut out = Vec::new();
        s.feed(
            "GET /a?x=<\"é\"> HTTP/1.1\r\nX-Quote: \"<>\"\r\nContent-Length: 3\r\n\r\n<é>"
                .as_bytes(),
            &mut out,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "GET /a?x=%3C%22%C3%A9%22%3E HTTP/1.1\r\nX-Quote: \"<>\"\r\nContent-Length: 3\r\n\r\n<é>"
        );
        assert_eq!(s.verdicts.pop_front(), Some(Framing::Plain));
    }
}
